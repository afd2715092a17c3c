package nodeagent

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"sync"
)

// block is text exposition and, made once when first asked for, its
// deflate blocks: flushed to a byte boundary and left open, so that a
// response continues the same gzip member with the live families' blocks.
// A single member decodes in every gzip client, including those that stop
// after the first member.
type block struct {
	text     []byte
	once     sync.Once
	deflated []byte
	crc      uint32
}

// deflate returns the text's open deflate blocks and its CRC-32.
func (b *block) deflate() ([]byte, uint32) {
	b.once.Do(func() {
		var buf bytes.Buffer
		fw, _ := flate.NewWriter(&buf, flate.DefaultCompression) // fails only for a bad level
		_, _ = fw.Write(b.text)                                  // writes to a bytes.Buffer do not fail
		_ = fw.Flush()
		b.deflated, b.crc = buf.Bytes(), crc32.ChecksumIEEE(b.text)
	})
	return b.deflated, b.crc
}

// gzipHeader opens a gzip member: deflate, no flags, no time, unknown OS.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}

// flatePool holds the deflate writers of the per-scrape part; each holds
// a large window, so they are reused rather than made per scrape.
var flatePool = sync.Pool{New: func() any {
	fw, _ := flate.NewWriter(nil, flate.BestSpeed) // fails only for a bad level
	return fw
}}

// gzipMember returns the parts of one gzip member holding head's text then
// tail: head's cached deflate blocks, tail compressed into buf, and the
// trailer with the CRC-32 and length (modulo 2^32) of both.
func gzipMember(head *block, tail []byte, buf *bytes.Buffer) [][]byte {
	deflated, crc := head.deflate()
	fw := flatePool.Get().(*flate.Writer)
	fw.Reset(buf)
	_, _ = fw.Write(tail) // writes to a bytes.Buffer do not fail
	_ = fw.Close()
	flatePool.Put(fw)
	trailer := make([]byte, 8)
	binary.LittleEndian.PutUint32(trailer, crc32.Update(crc, crc32.IEEETable, tail))
	binary.LittleEndian.PutUint32(trailer[4:], uint32(uint64(len(head.text)+len(tail))&0xffffffff))
	return [][]byte{gzipHeader, deflated, buf.Bytes(), trailer}
}
