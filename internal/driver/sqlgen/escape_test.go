package sqlgen

import (
	"bytes"
	"testing"
)

// escapedModel is AppendEscaped byte by byte: the model it is held to.
func escapedModel(dst, v []byte, e *Escapes) []byte {
	for _, c := range v {
		if esc := e[c]; esc != 0 {
			dst = append(dst, '\\', esc)
		} else {
			dst = append(dst, c)
		}
	}
	return dst
}

func TestAppendEscaped(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		e        *Escapes
	}{
		{"", "", &CopyEscapes},
		{"a\tb\nc\rd\\e\x00\x1a", `a\tb\nc\rd\\e` + "\x00\x1a", &CopyEscapes},
		{"a\tb\nc\rd\\e\x00\x1a", `a\tb\nc\rd\\e\0\Z`, &LoadDataEscapes},
		// Past the eight bytes checked at a time: a byte to escape at
		// each place in a word and after it, and control bytes and high
		// bytes that need none.
		{"0123456789abcdef\\", `0123456789abcdef\\`, &CopyEscapes},
		{"01234567\n89abcdef\x01\x1f~\x7f\x80\xff", `01234567\n89abcdef` + "\x01\x1f~\x7f\x80\xff", &LoadDataEscapes},
		{"xxxxxxx\tyyyyyyyyy\x00", `xxxxxxx\tyyyyyyyyy\0`, &LoadDataEscapes},
	} {
		if got := string(AppendEscaped([]byte("x"), []byte(tc.in), tc.e)); got != "x"+tc.want {
			t.Errorf("AppendEscaped(%q) = %q, want %q", tc.in, got, "x"+tc.want)
		}
	}
}

// Every block of 32 and word of eight bytes with one byte of each value
// at each place escapes as the model does: the checks miss no byte.
func TestAppendEscapedEveryByte(t *testing.T) {
	v := bytes.Repeat([]byte{'x'}, 48)
	for pos := range len(v) {
		for c := range 256 {
			v[pos] = byte(c)
			for _, e := range []*Escapes{&CopyEscapes, &LoadDataEscapes} {
				if got, want := AppendEscaped(nil, v, e), escapedModel(nil, v, e); !bytes.Equal(got, want) {
					t.Fatalf("byte %#x at %d: %q, want %q", c, pos, got, want)
				}
			}
		}
		v[pos] = 'x'
	}
}

func FuzzAppendEscaped(f *testing.F) {
	for _, s := range []string{"", "a\tb", "\\N", "\x00\x1a\r\n\\\\", "0123456789abcdef\x7f\x80\\"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		for _, e := range []*Escapes{&CopyEscapes, &LoadDataEscapes} {
			if got, want := AppendEscaped(nil, v, e), escapedModel(nil, v, e); !bytes.Equal(got, want) {
				t.Fatalf("AppendEscaped(%q) = %q, want %q", v, got, want)
			}
		}
	})
}

// BenchmarkAppendEscaped escapes a payload of storage bulk's shape: 1000
// bytes, none to escape.
func BenchmarkAppendEscaped(b *testing.B) {
	v := bytes.Repeat([]byte{'x'}, 1000)
	dst := make([]byte, 0, 2048)
	b.SetBytes(int64(len(v)))
	for range b.N {
		dst = AppendEscaped(dst[:0], v, &CopyEscapes)
	}
}

// BenchmarkAppendEscapedSome escapes 1000 printable bytes with a
// backslash in every 100: the blocks that hold one take the slower path.
func BenchmarkAppendEscapedSome(b *testing.B) {
	v := bytes.Repeat([]byte{'x'}, 1000)
	for i := 50; i < len(v); i += 100 {
		v[i] = '\\'
	}
	dst := make([]byte, 0, 2048)
	b.SetBytes(int64(len(v)))
	for range b.N {
		dst = AppendEscaped(dst[:0], v, &CopyEscapes)
	}
}
