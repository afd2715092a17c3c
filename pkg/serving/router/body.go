package router

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
)

// firstBodyBuffer is the capacity a body buffer starts with, or the
// declared size when that is smaller: the usual prediction request fits,
// and a client that declares a large body but sends little makes the
// router hold little.
const firstBodyBuffer = 4 << 10

// byteBudget bounds the bytes that requests in flight hold at once; a nil
// budget bounds nothing. It never blocks: what does not fit is refused.
type byteBudget struct {
	limit int64
	used  atomic.Int64
}

// newByteBudget returns a budget of limit bytes; with limit 0 or less
// every take is refused.
func newByteBudget(limit int64) *byteBudget { return &byteBudget{limit: limit} }

// take reserves n bytes and reports whether they fit.
func (b *byteBudget) take(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// give returns n bytes taken earlier.
func (b *byteBudget) give(n int64) {
	if b != nil && n > 0 {
		b.used.Add(-n)
	}
}

// inUse returns the bytes taken and not given back.
func (b *byteBudget) inUse() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// grow returns buf with room for at least one more byte: its capacity
// doubled, first up to ceiling (the declared size) and then up to limit,
// taken from budget. It returns nil when buf is at limit or the budget
// refuses; taken is the change of what buf holds of the budget.
func grow(buf []byte, ceiling, limit int64, budget *byteBudget) (out []byte, taken int64) {
	have := int64(cap(buf))
	if have >= limit {
		return nil, 0
	}
	next := max(have*2, firstBodyBuffer)
	if have < ceiling {
		next = min(next, ceiling)
	}
	next = min(next, limit)
	if !budget.take(next) {
		return nil, 0
	}
	budget.give(have)
	out = make([]byte, len(buf), next)
	copy(out, buf)
	return out, next - have
}

// readBody reads body up to max+1 bytes into a buffer that grows as the
// bytes arrive, doubling from firstBodyBuffer (or the declared size, when
// smaller) and not beyond the declared size (-1 when unknown) unless more
// comes: a client that declares 4 MiB and trickles a few bytes makes the
// router hold a few KiB, not 4 MiB. The buffer's capacity is taken from
// budget (nil for none) as it grows; when the budget refuses, reading
// stops. It returns what it read, what it took from budget (to be given
// back once the bytes are no longer held, also on an error), and whether
// that is the whole body: false when it is over max or the budget
// refused, and the rest is still to be read from body.
func readBody(body io.Reader, size int64, max int, budget *byteBudget) (buf []byte, taken int64, whole bool, err error) {
	limit := int64(max) + 1
	ceiling := limit
	if size >= 0 {
		ceiling = min(size+1, limit) // the read that meets EOF needs room
	}
	first := min(ceiling, firstBodyBuffer)
	if !budget.take(first) {
		return nil, 0, false, nil
	}
	buf, taken = make([]byte, 0, first), first
	lr := io.LimitedReader{R: body, N: limit}
	for {
		if len(buf) == cap(buf) {
			grown, more := grow(buf, ceiling, limit, budget)
			if grown == nil {
				return buf, taken, false, nil
			}
			buf, taken = grown, taken+more
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, taken, len(buf) <= max, nil
		}
		if err != nil {
			return nil, taken, false, err
		}
	}
}

// capture is a ResponseWriter keeping a copy of the body up to max bytes,
// in a buffer that grows as the body is written and is taken from budget.
// Once the body is over max, or the budget refuses, the copy is dropped and
// over is set.
type capture struct {
	http.ResponseWriter
	buf    []byte
	max    int
	budget *byteBudget
	// taken is what buf holds of budget, to be given back with release.
	taken int64
	over  bool
	wrote bool
}

// Write copies p and writes it. The first write sizes the copy by the
// response's Content-Length, when it has one under max.
func (c *capture) Write(p []byte) (int, error) {
	if !c.wrote {
		c.wrote = true
		if n, err := strconv.Atoi(c.Header().Get("Content-Length")); err == nil && n > 0 && n <= c.max && c.budget.take(int64(n)) {
			c.buf, c.taken = make([]byte, 0, n), int64(n)
		}
	}
	if !c.over {
		c.keep(p)
	}
	return c.ResponseWriter.Write(p)
}

// keep appends p to the copy, growing it, or drops the copy.
func (c *capture) keep(p []byte) {
	need := int64(len(c.buf) + len(p))
	if need > int64(c.max) {
		c.drop()
		return
	}
	for int64(cap(c.buf)) < need {
		grown, more := grow(c.buf, int64(c.max), int64(c.max), c.budget)
		if grown == nil {
			c.drop()
			return
		}
		c.buf, c.taken = grown, c.taken+more
	}
	c.buf = append(c.buf, p...)
}

// drop forgets the copy and gives its bytes back.
func (c *capture) drop() {
	c.over = true
	c.buf = nil
	c.release()
}

// release gives back what the copy holds of the budget.
func (c *capture) release() {
	c.budget.give(c.taken)
	c.taken = 0
}

// Flush flushes the underlying writer, for streamed responses.
func (c *capture) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
