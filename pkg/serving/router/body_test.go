package router

import (
	"bytes"
	"io"
	"net/http/httptest"
	"testing"
)

// TestReadBody checks what readBody returns for bodies shorter, longer and
// other than declared, and over the bound.
func TestReadBody(t *testing.T) {
	const max = 10000
	for _, tc := range []struct {
		name     string
		body     int
		declared int64
		want     int
		whole    bool
	}{
		{"empty", 0, 0, 0, true},
		{"declared", 7000, 7000, 7000, true},
		{"unknown size", 7000, -1, 7000, true},
		{"declared too small", 7000, 10, 7000, true},
		{"declared too large", 7000, 9000, 7000, true},
		{"at the limit", max, max, max, true},
		{"over the limit", 30000, 30000, max + 1, false},
		{"over the limit, unknown size", 30000, -1, max + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := bytes.Repeat([]byte("x"), tc.body)
			budget := newByteBudget(1 << 20)
			got, taken, whole, err := readBody(bytes.NewReader(body), tc.declared, max, budget)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || !bytes.Equal(got, body[:tc.want]) || whole != tc.whole {
				t.Errorf("read %d bytes, whole %v; want %d, %v", len(got), whole, tc.want, tc.whole)
			}
			if taken != int64(cap(got)) || budget.inUse() != taken {
				t.Errorf("took %d, the budget has %d in use, the buffer holds %d", taken, budget.inUse(), cap(got))
			}
		})
	}
}

// trickle is a body of which only sent has arrived when its client goes
// away.
type trickle struct{ sent []byte }

// Read returns the bytes sent, then io.ErrUnexpectedEOF as for a client
// that went away.
func (r *trickle) Read(p []byte) (int, error) {
	if len(r.sent) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, r.sent)
	r.sent = r.sent[n:]
	return n, nil
}

// TestReadBodyGrowsAsBytesArrive checks that a body declared 4 MiB of
// which a few bytes arrived holds a few KiB, not the declared size, and
// that a body of 64 KiB takes a few doublings.
func TestReadBodyGrowsAsBytesArrive(t *testing.T) {
	budget := newByteBudget(64 << 20)
	_, taken, _, err := readBody(&trickle{sent: []byte("0123456789")}, 4<<20, 4<<20, budget)
	if err == nil {
		t.Fatal("a body cut short read without an error")
	}
	if taken > firstBodyBuffer {
		t.Errorf("10 bytes of a declared 4 MiB took %d bytes", taken)
	}
	body := bytes.Repeat([]byte("x"), 64<<10)
	rd := bytes.NewReader(body)
	if n := testing.AllocsPerRun(20, func() {
		rd.Reset(body)
		_, _, _, _ = readBody(rd, int64(len(body)), 4<<20, nil)
	}); n > 6 {
		t.Errorf("reading a declared body of 64 KiB allocates %v times, want at most 6", n)
	}
}

// TestReadBodyBudget checks that reading stops when the budget refuses
// more room, with the bytes read so far, and that the budget's bytes come
// back.
func TestReadBodyBudget(t *testing.T) {
	budget := newByteBudget(16 << 10)
	body := bytes.Repeat([]byte("x"), 100<<10)
	rd := bytes.NewReader(body)
	got, taken, whole, err := readBody(rd, int64(len(body)), 4<<20, budget)
	if err != nil {
		t.Fatal(err)
	}
	if whole || len(got) > 16<<10 || taken > 16<<10 || !bytes.Equal(got, body[:len(got)]) {
		t.Errorf("read %d bytes (whole %v), took %d of a budget of 16 KiB", len(got), whole, taken)
	}
	rest, _ := io.ReadAll(rd)
	if len(got)+len(rest) != len(body) {
		t.Errorf("%d bytes read and %d left of %d", len(got), len(rest), len(body))
	}
	budget.give(taken)
	if budget.inUse() != 0 {
		t.Errorf("%d bytes still in use", budget.inUse())
	}
	if _, taken, whole, _ := readBody(bytes.NewReader(body), 10, 4<<20, newByteBudget(0)); whole || taken != 0 {
		t.Errorf("an empty budget gave %d bytes", taken)
	}
}

// TestCapture checks the copy of a response: whole under max, dropped over
// max or when the budget refuses, and the budget's bytes given back.
func TestCapture(t *testing.T) {
	for _, tc := range []struct {
		name          string
		writes, max   int
		budget        int64
		contentLength string
		over          bool
	}{
		{"small", 3, 100 << 10, 1 << 20, "", false},
		{"many writes", 40, 100 << 10, 1 << 20, "", false},
		{"declared", 40, 100 << 10, 1 << 20, "40960", false},
		{"over max", 40, 10 << 10, 1 << 20, "", true},
		{"over the budget", 40, 100 << 10, 16 << 10, "", true},
		{"declared over the budget", 40, 100 << 10, 16 << 10, "40960", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			if tc.contentLength != "" {
				rec.Header().Set("Content-Length", tc.contentLength)
			}
			budget := newByteBudget(tc.budget)
			c := &capture{ResponseWriter: rec, max: tc.max, budget: budget}
			chunk := bytes.Repeat([]byte("y"), 1<<10)
			for range tc.writes {
				if _, err := c.Write(chunk); err != nil {
					t.Fatal(err)
				}
			}
			if rec.Body.Len() != tc.writes<<10 {
				t.Errorf("the client got %d bytes", rec.Body.Len())
			}
			if c.over != tc.over || (!tc.over && !bytes.Equal(c.buf, rec.Body.Bytes())) {
				t.Errorf("over %v with %d bytes copied, want over %v", c.over, len(c.buf), tc.over)
			}
			if budget.inUse() > tc.budget {
				t.Errorf("%d bytes of a budget of %d in use", budget.inUse(), tc.budget)
			}
			c.release()
			if budget.inUse() != 0 {
				t.Errorf("%d bytes in use after release", budget.inUse())
			}
		})
	}
}
