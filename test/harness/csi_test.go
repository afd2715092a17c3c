package harness

import "testing"

func TestUnescapeMountPath(t *testing.T) {
	tests := map[string]string{
		`/var/lib/kubelet`:         "/var/lib/kubelet",
		`/mnt/with\040space`:       "/mnt/with space",
		`/a\011tab\012nl\134slash`: "/a\ttab\nnl\\slash",
		`/trailing\04`:             `/trailing\04`,
		`/not\999octal`:            `/not\999octal`,
	}
	for in, want := range tests {
		if got := unescapeMountPath(in); got != want {
			t.Errorf("unescapeMountPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMountsRootListsAll(t *testing.T) {
	all, err := Mounts("/")
	if err != nil {
		t.Fatal(err)
	}
	proc, err := Mounts("/proc")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 || len(proc) == 0 || len(all) <= len(proc) {
		t.Fatalf("Mounts(/) = %d mounts, Mounts(/proc) = %d: want / to list every mount", len(all), len(proc))
	}
}
