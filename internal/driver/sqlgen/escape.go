package sqlgen

import "encoding/binary"

// Escapes is a bulk text format's escaping: for each byte, the letter
// written after a backslash in its place, or 0 for a byte written as it
// is. Only control bytes (below 0x20) and the backslash may be escaped:
// AppendEscaped skips, eight at a time, the bytes that are neither.
type Escapes [256]byte

// CopyEscapes are PostgreSQL COPY's text format's: backslash, tab,
// newline and carriage return.
var CopyEscapes = Escapes{'\\': '\\', '\t': 't', '\n': 'n', '\r': 'r'}

// LoadDataEscapes are MySQL LOAD DATA's with ESCAPED BY '\': COPY's, and
// NUL and Ctrl-Z.
var LoadDataEscapes = Escapes{'\\': '\\', '\t': 't', '\n': 'n', '\r': 'r', 0: '0', 0x1a: 'Z'}

// AppendEscaped appends v to dst with each byte e escapes written as a
// backslash and its letter. Eight bytes at a time are checked for a byte
// that may need escaping and copied whole when none does: byte by byte,
// the check was most of a bulk load's client CPU (1 µs per 1000-byte
// payload, 1 s per GB loaded).
func AppendEscaped(dst, v []byte, e *Escapes) []byte {
	start := 0
	for i := 0; i < len(v); {
		if i+8 <= len(v) && maySpecial(binary.LittleEndian.Uint64(v[i:])) == 0 {
			i += 8
			continue
		}
		esc := e[v[i]]
		if esc == 0 {
			i++
			continue
		}
		dst = append(dst, v[start:i]...)
		dst = append(dst, '\\', esc)
		i++
		start = i
	}
	return append(dst, v[start:]...)
}

// maySpecial is not 0 when one of the eight bytes of x is a control byte
// (below 0x20) or a backslash: the has-less-than and has-zero-byte tricks
// of "Bit Twiddling Hacks" (public domain), exact as to whether any byte
// is one, which is all the caller asks.
func maySpecial(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	b := x ^ (ones * '\\')
	return ((x - ones*0x20) &^ x & highs) | ((b - ones) &^ b & highs)
}
