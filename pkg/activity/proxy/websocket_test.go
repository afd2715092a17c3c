package proxy

import (
	"encoding/binary"
	"testing"
)

// frame returns a websocket frame of opcode op with payload, masked as a
// client sends it.
func frame(op byte, payload []byte) []byte {
	b := []byte{0x80 | op}
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126, 0, 0)
		binary.BigEndian.PutUint16(b[2:], uint16(n))
	default:
		b = append(b, 0x80|127, 0, 0, 0, 0, 0, 0, 0, 0)
		binary.BigEndian.PutUint64(b[2:], uint64(n))
	}
	mask := []byte{1, 2, 3, 4}
	b = append(b, mask...)
	for i, c := range payload {
		b = append(b, c^mask[i%4])
	}
	return b
}

func concat(frames ...[]byte) []byte {
	var out []byte
	for _, f := range frames {
		out = append(out, f...)
	}
	return out
}

func TestFrameScanner(t *testing.T) {
	const (
		opText = 0x1
		opPing = 0x9
	)
	// A binary payload that holds what looks like a text frame's header:
	// the scanner skips payloads by count and must not see it.
	tricky := frame(opText, []byte("hi"))
	for _, tc := range []struct {
		name  string
		input []byte
		want  bool
	}{
		{"text frame", frame(opText, []byte(`{"msg_type":"execute_request"}`)), true},
		{"binary frame", frame(opBinary, []byte{0, 1, 2}), true},
		{"empty text frame", frame(opText, nil), true},
		{"ping", frame(opPing, []byte("keepalive")), false},
		{"pong", frame(opPong, []byte("keepalive")), false},
		{"close", frame(opClose, []byte{0x03, 0xe8}), false},
		{"pings and pongs", concat(frame(opPing, nil), frame(opPong, []byte("x")), frame(opPong, nil)), false},
		{"pong then text", concat(frame(opPong, nil), frame(opText, []byte("a"))), true},
		{"binary with a 16-bit length", frame(opBinary, make([]byte, 300)), true},
		{"binary with a 64-bit length", frame(opBinary, make([]byte, 70000)), true},
		{"reserved opcode", []byte{0x83, 0x80, 1, 2, 3, 4}, true},
		{"control frame too long", []byte{0x89, 0x80 | 126, 0, 200, 1, 2, 3, 4}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &frameScanner{}
			if got := s.scan(tc.input); got != tc.want {
				t.Errorf("scan in one piece = %v, want %v", got, tc.want)
			}
			s = &frameScanner{}
			got := false
			for i := range tc.input {
				got = s.scan(tc.input[i:i+1]) || got
			}
			if got != tc.want {
				t.Errorf("scan byte by byte = %v, want %v", got, tc.want)
			}
		})
	}

	t.Run("payload is skipped", func(t *testing.T) {
		s := &frameScanner{}
		// A pong whose payload is a text frame: no data.
		if s.scan(frame(opPong, tricky)) {
			t.Error("a pong carrying bytes that look like a text frame counted as data")
		}
		// The scanner is back at a frame boundary: a ping is still no data,
		// a text frame is.
		if s.scan(frame(opPing, nil)) {
			t.Error("ping after the pong counted as data")
		}
		if !s.scan(frame(opText, []byte("x"))) {
			t.Error("text frame after the pong did not count")
		}
	})

	t.Run("header split from its payload", func(t *testing.T) {
		s := &frameScanner{}
		f := frame(opPing, []byte("0123456789"))
		if s.scan(f[:3]) || s.scan(f[3:9]) || s.scan(f[9:]) {
			t.Error("a ping read in pieces counted as data")
		}
		if !s.scan(frame(opText, nil)) {
			t.Error("the following text frame did not count")
		}
	})

	t.Run("length with the top bit set", func(t *testing.T) {
		s := &frameScanner{}
		b := []byte{0x82, 0x80 | 127, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}
		if !s.scan(b) || !s.opaque {
			t.Error("an invalid length did not make the stream opaque")
		}
		if !s.scan([]byte{0x8a, 0x80, 1, 2, 3, 4}) {
			t.Error("data after an invalid frame did not count")
		}
	})
}
