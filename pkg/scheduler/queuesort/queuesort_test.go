package queuesort

import (
	"sort"
	"testing"
	"time"
)

func TestLess(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Second)
	base := Key{QueuePriority: 5, QueueShare: 0.5, GroupPriority: 5, PodPriority: 5, Timestamp: t0}
	with := func(f func(*Key)) Key { k := base; f(&k); return k }

	tests := []struct {
		name string
		a, b Key
		want bool // Less(a, b)
	}{
		{name: "higher queue priority first", a: with(func(k *Key) { k.QueuePriority = 6 }), b: base, want: true},
		{name: "lower queue priority later", a: with(func(k *Key) { k.QueuePriority = 4 }), b: base, want: false},
		{
			name: "queue priority beats every later level",
			a:    Key{QueuePriority: 6, QueueShare: 0.9, GroupPriority: 0, PodPriority: 0, Timestamp: t1},
			b:    Key{QueuePriority: 5, QueueShare: 0.1, GroupPriority: 100, PodPriority: 1000, Timestamp: t0},
			want: true,
		},
		{name: "equal queue priority: lower share first", a: with(func(k *Key) { k.QueueShare = 0.4 }), b: base, want: true},
		{name: "equal queue priority: higher share later", a: with(func(k *Key) { k.QueueShare = 0.6 }), b: base, want: false},
		{
			name: "share beats group priority, pod priority and age",
			a:    with(func(k *Key) { k.QueueShare = 0.4; k.GroupPriority = 0; k.PodPriority = 0; k.Timestamp = t1 }),
			b:    base,
			want: true,
		},
		{
			name: "spec DRF example: B (1/2) before A (5/8)",
			a:    with(func(k *Key) { k.QueueShare = 1.0 / 2 }),
			b:    with(func(k *Key) { k.QueueShare = 5.0 / 8 }),
			want: true,
		},
		{name: "equal share: higher group priority first", a: with(func(k *Key) { k.GroupPriority = 6 }), b: base, want: true},
		{name: "equal share: lower group priority later", a: with(func(k *Key) { k.GroupPriority = 4 }), b: base, want: false},
		{
			name: "group priority beats pod priority and age",
			a:    with(func(k *Key) { k.GroupPriority = 6; k.PodPriority = 0; k.Timestamp = t1 }),
			b:    base,
			want: true,
		},
		{name: "equal group priority: higher pod priority first", a: with(func(k *Key) { k.PodPriority = 6 }), b: base, want: true},
		{name: "equal group priority: lower pod priority later", a: with(func(k *Key) { k.PodPriority = 4 }), b: base, want: false},
		{name: "pod priority beats age", a: with(func(k *Key) { k.PodPriority = 6; k.Timestamp = t1 }), b: base, want: true},
		{name: "all equal: older first", a: base, b: with(func(k *Key) { k.Timestamp = t1 }), want: true},
		{name: "all equal: younger later", a: with(func(k *Key) { k.Timestamp = t1 }), b: base, want: false},
		{name: "identical keys: not less", a: base, b: base, want: false},
		{name: "zero keys: not less", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Less(tt.a, tt.b); got != tt.want {
				t.Errorf("Less(a, b) = %v, want %v", got, tt.want)
			}
			if tt.want && Less(tt.b, tt.a) {
				t.Error("Less(b, a) is also true")
			}
		})
	}
}

func TestLessSortsAllLevels(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	type named struct {
		name string
		k    Key
	}
	keys := []named{
		{"old-low-pod", Key{QueuePriority: 1, QueueShare: 0.2, GroupPriority: 1, PodPriority: 0, Timestamp: t0}},
		{"low-queue", Key{QueuePriority: 0, Timestamp: t0}},
		{"high-share", Key{QueuePriority: 1, QueueShare: 0.8, GroupPriority: 9, PodPriority: 9, Timestamp: t0}},
		{"young", Key{QueuePriority: 1, QueueShare: 0.2, GroupPriority: 1, PodPriority: 1, Timestamp: t0.Add(time.Minute)}},
		{"old", Key{QueuePriority: 1, QueueShare: 0.2, GroupPriority: 1, PodPriority: 1, Timestamp: t0}},
		{"high-group", Key{QueuePriority: 1, QueueShare: 0.2, GroupPriority: 2, Timestamp: t0.Add(time.Hour)}},
		{"high-queue", Key{QueuePriority: 2, QueueShare: 1, Timestamp: t0.Add(time.Hour)}},
	}
	sort.SliceStable(keys, func(i, j int) bool { return Less(keys[i].k, keys[j].k) })
	want := []string{"high-queue", "high-group", "old", "young", "old-low-pod", "high-share", "low-queue"}
	for i := range want {
		if keys[i].name != want[i] {
			var got []string
			for _, k := range keys {
				got = append(got, k.name)
			}
			t.Fatalf("order = %v, want %v", got, want)
		}
	}
}

// TestLessKeepsGangsTogether: pods of a PodGroup take the group's age, so a
// gang created first goes wholly before a later one, whatever the order its
// pods were created in, and a pod created between them does not split them.
func TestLessKeepsGangsTogether(t *testing.T) {
	t0 := time.Unix(1000, 0)
	older := func(i int) Key {
		return Key{Group: "ns/a", GroupTimestamp: t0, Timestamp: t0.Add(time.Duration(10+i) * time.Second)}
	}
	younger := Key{Group: "ns/b", GroupTimestamp: t0.Add(time.Second), Timestamp: t0.Add(2 * time.Second)}
	loose := Key{Timestamp: t0.Add(5 * time.Second)}
	for i := range 3 {
		if !Less(older(i), younger) || Less(younger, older(i)) {
			t.Errorf("member %d of the older gang should go before the younger gang's pod", i)
		}
		if !Less(older(i), loose) {
			t.Errorf("member %d of the older gang should go before a pod created after the gang", i)
		}
	}
	if !Less(older(0), older(1)) || Less(older(1), older(0)) {
		t.Error("within a gang, the older pod should go first")
	}
	if !Less(younger, loose) {
		t.Error("the younger gang, created before the loose pod, should go first")
	}
	same := Key{Group: "ns/c", GroupTimestamp: t0, Timestamp: t0}
	if !Less(older(5), same) || Less(same, older(5)) {
		t.Error("gangs of the same age should be ordered by name, not interleaved")
	}
}
