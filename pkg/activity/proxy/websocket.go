package proxy

// frameScanner follows the websocket frames (RFC 6455 §5.2) a client sends
// and tells the data frames (text, binary, continuation) from the control
// frames (close, ping, pong). It keeps only a frame header, at most 14
// bytes, and skips payloads by count: the client's masked payloads are
// never looked at.
type frameScanner struct {
	hdr [14]byte
	// n is the number of header bytes held.
	n int
	// skip is the number of payload bytes of the current frame to come.
	skip uint64
	// opaque is set once the stream is not well-formed frames; every byte
	// then counts as data, so that the sidecar errs toward activity.
	opaque bool
}

// The opcodes (RFC 6455 §5.2): below opClose are data frames, the rest
// control frames; 0x3-0x7 and 0xB-0xF are reserved.
const (
	opBinary = 0x2
	opClose  = 0x8
	opPong   = 0xA
)

// maxControlPayload is the largest payload of a control frame.
const maxControlPayload = 125

// scan takes the next bytes from the client and reports whether they hold
// the header of a data frame.
func (s *frameScanner) scan(p []byte) (data bool) {
	for len(p) > 0 {
		if s.opaque {
			return true
		}
		if s.skip > 0 {
			k := min(uint64(len(p)), s.skip)
			s.skip -= k
			p = p[k:]
			continue
		}
		k := copy(s.hdr[s.n:s.headerLen()], p)
		s.n += k
		p = p[k:]
		if s.n < 2 || s.n < s.headerLen() {
			continue
		}
		isData, length, ok := s.frame()
		s.n = 0
		if !ok {
			s.opaque = true
			return true
		}
		data = data || isData
		s.skip = length
	}
	return data
}

// headerLen is the length of the header being read: 2 until its second
// byte is known, then with the extended length and the masking key.
func (s *frameScanner) headerLen() int {
	if s.n < 2 {
		return 2
	}
	l := 2
	switch s.hdr[1] & 0x7f {
	case 126:
		l += 2
	case 127:
		l += 8
	}
	if s.hdr[1]&0x80 != 0 {
		l += 4
	}
	return l
}

// frame decodes the complete header held: whether it is a data frame, its
// payload length, and whether it is well-formed.
func (s *frameScanner) frame() (data bool, length uint64, ok bool) {
	op := s.hdr[0] & 0x0f
	length = uint64(s.hdr[1] & 0x7f)
	switch length {
	case 126:
		length = uint64(s.hdr[2])<<8 | uint64(s.hdr[3])
	case 127:
		length = 0
		for _, b := range s.hdr[2:10] {
			length = length<<8 | uint64(b)
		}
		if length>>63 != 0 {
			return false, 0, false
		}
	}
	switch {
	case op <= opBinary:
		return true, length, true
	case op >= opClose && op <= opPong:
		return false, length, length <= maxControlPayload
	}
	return false, 0, false
}
