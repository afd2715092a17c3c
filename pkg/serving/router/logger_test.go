package router

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/accelstack/accelstack/pkg/serving/routerconfig"
)

// TestLoggerSinkStatus: an event the sink answers with 2xx is sent, one it
// refuses is failed; the connection to the sink is kept across events.
func TestLoggerSinkStatus(t *testing.T) {
	a := upstream(t, "a")
	for _, tc := range []struct {
		name                 string
		status               int
		wantSent, wantFailed int64
	}{
		{"accepted", http.StatusAccepted, 2, 0},
		{"no content", http.StatusNoContent, 2, 0},
		{"refused", http.StatusInternalServerError, 0, 2},
		{"not found", http.StatusNotFound, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, "answer")
			}))
			conns := startCounting(t, s)
			opts := DefaultOptions()
			opts.Workers = 1
			r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{
				{Name: "a", URL: a.URL, Weight: 100, Logger: &routerconfig.Logger{URLs: []string{s.URL}}},
			}}, opts)
			do(t, r, "mls", "/", "x", nil)
			deadline := time.Now().Add(10 * time.Second)
			for st := r.Stats(); st.Sent+st.Failed < 2 && time.Now().Before(deadline); st = r.Stats() {
				time.Sleep(10 * time.Millisecond)
			}
			if st := r.Stats(); st.Sent != tc.wantSent || st.Failed != tc.wantFailed {
				t.Errorf("stats %+v, want %d sent and %d failed", st, tc.wantSent, tc.wantFailed)
			}
			if n := conns.opened.Load(); n != 1 {
				t.Errorf("%d connections to the sink for 2 events, want 1", n)
			}
		})
	}
}

// queuedLogger returns a logger with one worker for url whose queue holds
// n events when the worker starts, so that it finds them all waiting.
func queuedLogger(t *testing.T, url string, n int) *eventLogger {
	t.Helper()
	opts := DefaultOptions()
	opts.Workers = 1
	opts.SendTimeout = 10 * time.Second
	l := newEventLogger(t.Context(), opts)
	q := l.newQueue(url)
	for i := range n {
		e := event.New()
		e.SetID(fmt.Sprint(i))
		e.SetType(TypeRequest)
		e.SetSource("test")
		_ = e.SetData("application/json", []byte(fmt.Sprintf(`{"event":%d}`, i)))
		l.enqueue(q, e)
	}
	l.wg.Add(1)
	go l.work(q)
	t.Cleanup(l.wg.Wait)
	return l
}

// rawSink serves each connection to it with serve until the test ends,
// when its listener and connections are closed.
func rawSink(t *testing.T, serve func(c net.Conn, r *bufio.Reader) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		conns  = map[net.Conn]bool{}
		closed bool
		wg     sync.WaitGroup
	)
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		closed = true
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				c.Close()
				return
			}
			conns[c] = true
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				err := serve(c, bufio.NewReader(c))
				mu.Lock()
				ended := closed
				delete(conns, c)
				mu.Unlock()
				if err != nil && !ended {
					t.Errorf("sink: %v", err)
				}
			})
		}
	})
	return "http://" + ln.Addr().String()
}

// waitStats waits for the logger to have settled n events.
func waitStats(t *testing.T, l *eventLogger, n int64) Stats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for st := l.stats(); st.Sent+st.Failed < n && time.Now().Before(deadline); st = l.stats() {
		time.Sleep(10 * time.Millisecond)
	}
	return l.stats()
}

// readEvent reads a request of the logger from r and returns its Ce-Id,
// checking that its body is the event's of queuedLogger.
func readEvent(r *bufio.Reader) (string, error) {
	req, err := http.ReadRequest(r)
	if err != nil {
		return "", err
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return "", err
	}
	id := req.Header.Get("Ce-Id")
	if want := fmt.Sprintf(`{"event":%s}`, id); string(body) != want {
		return "", fmt.Errorf("event %q: body %s, want %s", id, body, want)
	}
	return id, nil
}

const accepted = "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"

// TestLoggerPipelines: the events waiting for a URL go out on one
// connection; once its first answer shows that it is kept, the others go
// out before any answer is read: the sink reads them all, in order and
// each in binary mode, before it answers.
func TestLoggerPipelines(t *testing.T) {
	const n = 20
	var conns atomic.Int32
	url := rawSink(t, func(c net.Conn, r *bufio.Reader) error {
		conns.Add(1)
		for i := range n {
			id, err := readEvent(r)
			if err != nil {
				return fmt.Errorf("request %d: %w", i, err)
			}
			if id != fmt.Sprint(i) {
				return fmt.Errorf("request %d is event %s", i, id)
			}
			if i == 0 {
				if r.Buffered() > 0 {
					return errors.New("a new connection got more than one request before its first answer")
				}
				if _, err := io.WriteString(c, accepted); err != nil {
					return err
				}
			}
		}
		_, err := io.WriteString(c, strings.Repeat(accepted, n-1))
		return err
	})
	l := queuedLogger(t, url, n)
	if st := waitStats(t, l, n); st.Sent != n || st.Failed != 0 {
		t.Errorf("stats %+v, want %d sent", st, n)
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("%d connections, want 1", got)
	}
}

// TestLoggerSinkCloses: a sink that closes its connections, after every
// answer as servers of HTTP/1.0 do or after a few, gets every event once:
// those its closing answer left unanswered go out again on a new
// connection.
func TestLoggerSinkCloses(t *testing.T) {
	const n = 12
	for _, limit := range []int{1, 5} {
		t.Run(fmt.Sprintf("%d answers per connection", limit), func(t *testing.T) {
			var mu sync.Mutex
			got := map[string]int{}
			var conns atomic.Int32
			url := rawSink(t, func(c net.Conn, r *bufio.Reader) error {
				conns.Add(1)
				for i := range limit {
					id, err := readEvent(r)
					if err != nil {
						return err
					}
					mu.Lock()
					got[id]++
					mu.Unlock()
					answer := accepted
					if i == limit-1 {
						answer = "HTTP/1.1 202 Accepted\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
					}
					if _, err := io.WriteString(c, answer); err != nil {
						return err
					}
				}
				// Closed as servers close, the requests that follow
				// read and dropped rather than reset.
				_ = c.(*net.TCPConn).CloseWrite()
				_, _ = io.Copy(io.Discard, r)
				return nil
			})
			l := queuedLogger(t, url, n)
			if st := waitStats(t, l, n); st.Sent != n || st.Failed != 0 {
				t.Errorf("stats %+v, want %d sent", st, n)
			}
			mu.Lock()
			defer mu.Unlock()
			for i := range n {
				if k := got[fmt.Sprint(i)]; k != 1 {
					t.Errorf("event %d received %d times, want once", i, k)
				}
			}
			if c, want := conns.Load(), int32((n+limit-1)/limit); c != want {
				t.Errorf("%d connections, want %d", c, want)
			}
		})
	}
}

// TestGatherBounds: a pipeline takes the events waiting, up to
// maxPipelined, and none once their bodies reach maxPipelinedBytes.
func TestGatherBounds(t *testing.T) {
	q := &queue{events: make(chan event.Event, 2*maxPipelined)}
	put := func(n, size int) {
		for range n {
			e := event.New()
			_ = e.SetData("application/octet-stream", make([]byte, size))
			q.events <- e
		}
	}
	for _, tc := range []struct {
		name        string
		count, size int
		want        []int // the lengths of the pipelines, one after the other
	}{
		{"small events", maxPipelined + 3, 100, []int{maxPipelined, 3}},
		{"40 KiB events", 3, 40 << 10, []int{2, 1}},
		{"one large event", 2, maxPipelinedBytes + 1, []int{1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			put(tc.count, tc.size)
			var got []int
			for len(q.events) > 0 {
				got = append(got, len(gather(q, []event.Event{<-q.events})))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("pipelines of %v events, want %v", got, tc.want)
			}
		})
	}
}
