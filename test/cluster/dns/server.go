package dns

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/net/dns/dnsmessage"
)

// TTL is the time to live of every answer, in seconds: short, since pods
// come and go within a test.
const TTL = 5

// forwardTimeout bounds one exchange with an upstream resolver.
const forwardTimeout = 3 * time.Second

// Server answers DNS queries over UDP and TCP: names under the cluster
// domain from Records, others from Upstreams.
type Server struct {
	Records *Records
	// Upstreams are the resolvers (host:port) of names outside the
	// cluster domain, tried in order; none means SERVFAIL for those.
	Upstreams []string
	Log       logr.Logger
}

// Answer returns the reply to the query msg received over network ("udp"
// or "tcp"), forwarding it when its name is outside the cluster domain.
func (s *Server) Answer(ctx context.Context, network string, msg []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		return nil, fmt.Errorf("parsing query: %w", err)
	}
	q, err := p.Question()
	if err != nil {
		return reply(h, nil, dnsmessage.RCodeFormatError, nil)
	}
	if h.OpCode != 0 || q.Class != dnsmessage.ClassINET {
		return reply(h, &q, dnsmessage.RCodeNotImplemented, nil)
	}
	addrs, inDomain, found, err := s.Records.Lookup(q.Name.String())
	switch {
	case err != nil:
		s.Log.Error(err, "Lookup failed", "name", q.Name.String())
		return reply(h, &q, dnsmessage.RCodeServerFailure, nil)
	case !inDomain:
		return s.forward(ctx, network, h, q, msg)
	case !found:
		return reply(h, &q, dnsmessage.RCodeNameError, nil)
	case q.Type != dnsmessage.TypeA && q.Type != dnsmessage.TypeALL:
		addrs = nil
	}
	answers := make([][4]byte, len(addrs))
	for i, a := range addrs {
		answers[i] = a.As4()
	}
	return reply(h, &q, dnsmessage.RCodeSuccess, answers)
}

// reply builds the answer to the query with header h and question q.
func reply(h dnsmessage.Header, q *dnsmessage.Question, rcode dnsmessage.RCode, addrs [][4]byte) ([]byte, error) {
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{
		ID: h.ID, Response: true, OpCode: h.OpCode, Authoritative: true,
		RecursionDesired: h.RecursionDesired, RecursionAvailable: true, RCode: rcode,
	})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if q != nil {
		if err := b.Question(*q); err != nil {
			return nil, err
		}
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	for _, a := range addrs {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: TTL}
		if err := b.AResource(rh, dnsmessage.AResource{A: a}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// forward asks the upstream resolvers, over the network the query came in
// on.
func (s *Server) forward(ctx context.Context, network string, h dnsmessage.Header, q dnsmessage.Question, msg []byte) ([]byte, error) {
	var errs []error
	for _, up := range s.Upstreams {
		ans, err := exchange(ctx, network, up, msg)
		if err == nil {
			return ans, nil
		}
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		s.Log.V(1).Info("Forwarding failed", "name", q.Name.String(), "err", errors.Join(errs...))
	}
	return reply(h, &q, dnsmessage.RCodeServerFailure, nil)
}

// exchange sends msg to the resolver at addr and returns its reply.
func exchange(ctx context.Context, network, addr string, msg []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if network == "tcp" {
		if err := writeTCP(conn, msg); err != nil {
			return nil, err
		}
		return readTCP(conn)
	}
	if _, err := conn.Write(msg); err != nil {
		return nil, err
	}
	buf := make([]byte, 65535)
	n, err := conn.Read(buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// ServeUDP answers the queries that arrive on conn until ctx ends.
func (s *Server) ServeUDP(ctx context.Context, conn net.PacketConn) error {
	go func() {
		<-ctx.Done()
		_ = conn.Close()
	}()
	for {
		buf := make([]byte, 65535)
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil //nolint:nilerr // closed because ctx ended
			}
			return fmt.Errorf("reading a query: %w", err)
		}
		go func() {
			ans, err := s.Answer(ctx, "udp", buf[:n])
			if err != nil {
				s.Log.V(1).Info("Dropping a query", "from", from.String(), "err", err)
				return
			}
			if _, err := conn.WriteTo(ans, from); err != nil && ctx.Err() == nil {
				s.Log.V(1).Info("Answering failed", "to", from.String(), "err", err)
			}
		}()
	}
}

// ServeTCP answers the queries of the connections that arrive on ln until
// ctx ends.
func (s *Server) ServeTCP(ctx context.Context, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		_ = ln.Close()
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil //nolint:nilerr // closed because ctx ended
			}
			return fmt.Errorf("accepting a connection: %w", err)
		}
		go func() {
			defer conn.Close()
			for {
				if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
					return
				}
				msg, err := readTCP(conn)
				if err != nil {
					return
				}
				ans, err := s.Answer(ctx, "tcp", msg)
				if err != nil || writeTCP(conn, ans) != nil {
					return
				}
			}
		}()
	}
}

// readTCP reads one length-prefixed message.
func readTCP(r io.Reader) ([]byte, error) {
	var n uint16
	if err := binary.Read(r, binary.BigEndian, &n); err != nil {
		return nil, err
	}
	msg := make([]byte, n)
	_, err := io.ReadFull(r, msg)
	return msg, err
}

// writeTCP writes one length-prefixed message.
func writeTCP(w io.Writer, msg []byte) error {
	buf := make([]byte, 2+len(msg))
	binary.BigEndian.PutUint16(buf, uint16(len(msg)))
	copy(buf[2:], msg)
	_, err := w.Write(buf)
	return err
}
