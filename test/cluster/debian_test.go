package cluster

import (
	"slices"
	"testing"
)

func TestParseSimulation(t *testing.T) {
	out := `NOTE: This is only a simulation!
Reading package lists...
Inst gcc-12-base (12.2.0-14+deb12u1 Debian:12.15/oldstable [amd64])
Inst libc6 (2.36-9+deb12u14 Debian:12.15/oldstable, Debian-Security:12/oldstable-security [amd64]) []
Inst python3-six:amd64 (1.16.0-4 Debian:12.15/oldstable [all])
Conf libc6 (2.36-9+deb12u14 Debian:12.15/oldstable [amd64])
Inst libxgboost0 (1:1.7.4-1 Debian:12.15/oldstable [amd64])
`
	var got []string
	for _, p := range parseSimulation([]byte(out)) {
		got = append(got, p.String())
	}
	want := []string{"gcc-12-base=12.2.0-14+deb12u1:amd64", "libc6=2.36-9+deb12u14:amd64", "python3-six=1.16.0-4:all", "libxgboost0=1:1.7.4-1:amd64"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestParseStanzas(t *testing.T) {
	out := `Package: python3-numpy
Version: 1:1.24.2-1+deb12u1
Architecture: amd64
Provides: python3-numpy-abi9, python3-numpy-api16 (= 16), python3.11-numpy
Depends: python3-pkg-resources, python3 (<< 3.12), python3:any, libblas3 | libblas.so.3,
 liblapack3 | liblapack.so.3
Description: Fast array facility
 with a long description: that has colons

Package: tar
Version: 1.34+dfsg-1.2
Architecture: amd64
Essential: yes
Pre-Depends: libacl1 (>= 2.2.23), libc6 (>= 2.34)

Package: tar
Version: 1.34+dfsg-1.2
Architecture: amd64
Essential: yes
Pre-Depends: libacl1 (>= 2.2.23), libc6 (>= 2.34)
`
	pkgs, err := parseStanzas([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 2 {
		t.Fatalf("got %d packages, want 2: %+v", len(pkgs), pkgs)
	}
	np := pkgs["python3-numpy"]
	if np.Version != "1:1.24.2-1+deb12u1" || np.Arch != "amd64" || np.Essential {
		t.Errorf("python3-numpy = %+v", np)
	}
	wantDeps := [][]string{{"python3-pkg-resources"}, {"python3"}, {"python3"}, {"libblas3", "libblas.so.3"}, {"liblapack3", "liblapack.so.3"}}
	if !slices.EqualFunc(np.Depends, wantDeps, slices.Equal) {
		t.Errorf("python3-numpy depends on %q, want %q", np.Depends, wantDeps)
	}
	if want := []string{"python3-numpy-abi9", "python3-numpy-api16", "python3.11-numpy"}; !slices.Equal(np.Provides, want) {
		t.Errorf("python3-numpy provides %q, want %q", np.Provides, want)
	}
	if tar := pkgs["tar"]; !tar.Essential || !slices.EqualFunc(tar.Depends, [][]string{{"libacl1"}, {"libc6"}}, slices.Equal) {
		t.Errorf("tar = %+v", tar)
	}
	if _, err := parseStanzas([]byte("Package: x\nno colon here\n")); err == nil {
		t.Error("a malformed stanza parsed")
	}
}

// closureSet is a small package universe: roots app and tool.
func closureSet() map[string]debPackage {
	pkgs := []debPackage{
		{Name: "app", Depends: [][]string{{"libfoo"}, {"libblas3", "libblas.so.3"}, {"dpkg"}, {"adduser"}}},
		{Name: "libfoo", Depends: [][]string{{"libc6"}}},
		{Name: "libc6"},
		// apt picked the provider, not the first alternative.
		{Name: "libopenblas0-pthread", Provides: []string{"libblas.so.3"}, Depends: [][]string{{"libc6"}}},
		{Name: "dpkg", Essential: true, Depends: [][]string{{"tar"}, {"libmd0"}}},
		{Name: "tar", Essential: true, Depends: [][]string{{"libacl1"}}},
		{Name: "libacl1"},
		{Name: "libmd0"},
		{Name: "adduser", Depends: [][]string{{"passwd"}, {"libc6"}}},
		{Name: "passwd"},
		{Name: "tool", Depends: [][]string{{"libmd0"}, {"missing-virtual"}}},
	}
	set := map[string]debPackage{}
	for _, p := range pkgs {
		set[p.Name] = p
	}
	return set
}

func TestClosure(t *testing.T) {
	names := func(ps []debPackage) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	keep, left, err := closure(closureSet(), []string{"app"}, []string{"adduser"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"app", "libc6", "libfoo", "libopenblas0-pthread"}; !slices.Equal(names(keep), want) {
		t.Errorf("kept %q, want %q", names(keep), want)
	}
	if want := []string{"adduser", "dpkg", "libacl1", "libmd0", "passwd", "tar", "tool"}; !slices.Equal(left, want) {
		t.Errorf("left out %q, want %q", left, want)
	}
	// A package that another root needs stays, even if an Essential one
	// needs it too.
	keep, _, err = closure(closureSet(), []string{"app", "tool"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"adduser", "app", "libc6", "libfoo", "libmd0", "libopenblas0-pthread", "passwd", "tool"}; !slices.Equal(names(keep), want) {
		t.Errorf("kept %q, want %q", names(keep), want)
	}
	if _, _, err := closure(closureSet(), []string{"app"}, []string{"app"}); err == nil {
		t.Error("an omitted root was accepted")
	}
	if _, _, err := closure(closureSet(), []string{"nothing"}, nil); err == nil {
		t.Error("a root outside the set was accepted")
	}
}

func TestVersionMatches(t *testing.T) {
	for _, tt := range []struct {
		version, want string
		ok            bool
	}{
		{"1.13.1+dfsg-4", "1.13", true},
		{"1.13.1+dfsg-4", "1.13.1", true},
		{"1.13.1+dfsg-4", "1.1", false},
		{"1.130-1", "1.13", false},
		{"1:1.7.4-1", "1.7", true},
		{"1:1.7.4-1", "1", true},
		{"2.0.0-1", "1.13", false},
		{"2.0.0-1", "", true},
		{"1.13~rc1-1", "1.13", true},
	} {
		if got := versionMatches(tt.version, tt.want); got != tt.ok {
			t.Errorf("versionMatches(%q, %q) = %v, want %v", tt.version, tt.want, got, tt.ok)
		}
	}
}

func TestPackagesKey(t *testing.T) {
	a := []debPackage{{Name: "libc6", Version: "2.36-9", Arch: "amd64"}, {Name: "python3", Version: "3.11.2-1", Arch: "amd64"}}
	b := []debPackage{a[1], a[0]}
	if packagesKey(a, "x") != packagesKey(b, "x") {
		t.Error("the key depends on the order of the packages")
	}
	c := []debPackage{a[0], {Name: "python3", Version: "3.11.2-2", Arch: "amd64"}}
	if packagesKey(a, "x") == packagesKey(c, "x") {
		t.Error("the key does not depend on the versions")
	}
	if packagesKey(a, "x") == packagesKey(a, "y") {
		t.Error("the key does not depend on the other inputs")
	}
	if packagesKey(a[:1]) == packagesKey(a) {
		t.Error("the key does not depend on the package list")
	}
}

func TestDebFile(t *testing.T) {
	p := debPackage{Name: "python3-numpy", Version: "1:1.24.2-1+deb12u1", Arch: "amd64"}
	if got, want := p.debFile(), "python3-numpy_1%3a1.24.2-1+deb12u1_amd64.deb"; got != want {
		t.Errorf("debFile() = %q, want %q", got, want)
	}
}
