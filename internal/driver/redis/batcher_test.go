package redis

import (
	"bytes"
	"net"
	"testing"
)

// recordingConn is a net.Conn that records each Write and reads nothing.
type recordingConn struct {
	net.Conn
	writes [][]byte
	reads  int
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, append([]byte(nil), p...))
	return len(p), nil
}

func (c *recordingConn) Read(p []byte) (int, error) {
	c.reads++
	return 0, nil
}

// redigo's 4 KiB pieces go out as one write per writeBuffer, and what is
// left before the next read; every byte, in order.
func TestWriteBatcher(t *testing.T) {
	inner := &recordingConn{}
	c := &writeBatcher{Conn: inner}
	var sent bytes.Buffer
	piece := bytes.Repeat([]byte("x"), 4096)
	for i := range 20 { // 80 KiB: two full buffers and 16 KiB left
		piece[0] = byte('a' + i)
		if n, err := c.Write(piece); n != len(piece) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		sent.Write(piece)
	}
	if len(inner.writes) != 2 || len(inner.writes[0]) != writeBuffer || len(inner.writes[1]) != writeBuffer {
		t.Fatalf("before the read: %d writes, want 2 of %d bytes", len(inner.writes), writeBuffer)
	}
	c.Read(make([]byte, 16))
	if len(inner.writes) != 3 || inner.reads != 1 {
		t.Fatalf("after the read: %d writes and %d reads, want the rest sent first", len(inner.writes), inner.reads)
	}
	c.Read(make([]byte, 16)) // nothing waits: no empty write
	big := bytes.Repeat([]byte("y"), writeBuffer+1)
	c.Write(big) // larger than the buffer: straight through
	sent.Write(big)
	if got := bytes.Join(inner.writes, nil); !bytes.Equal(got, sent.Bytes()) || len(inner.writes) != 4 {
		t.Errorf("%d writes of %d bytes, want 4 of the %d sent, in order", len(inner.writes), len(got), sent.Len())
	}
}
