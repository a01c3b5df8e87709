package keygen

import (
	"math"
	"strconv"
)

// FNV-1a 64-bit constants, as YCSB's Utils.fnvhash64 uses them.
const (
	fnvOffsetBasis64 = 0xCBF29CE484222325
	fnvPrime64       = 1099511628211
)

// FNVHash64 hashes a key number the way YCSB's Utils.fnvhash64 does: FNV-1a
// over the 8 bytes of v, lowest byte first, then the absolute value of the
// result read as a signed 64-bit number. It is what turns a key number into
// the number printed in a hashed key name and what scatters the popular items
// of the scrambled zipfian over the key space, so it must match YCSB bit for
// bit or dbprobe would touch different keys from YCSB's.
//
// YCSB's Math.abs leaves the one value with no positive counterpart,
// math.MinInt64, negative, which would make a scrambled zipfian pick a key
// below its range. FNVHash64 instead saturates it to math.MaxInt64, the
// nearest representable absolute value, so the result is never negative.
func FNVHash64(v int64) int64 {
	h := uint64(fnvOffsetBasis64)
	x := uint64(v)
	for range 8 {
		h ^= x & 0xff
		h *= fnvPrime64
		x >>= 8 // YCSB shifts arithmetically; only the low byte is read, so it makes no difference
	}
	return absSat(int64(h))
}

// absSat is |v|, saturated to math.MaxInt64 for math.MinInt64.
func absSat(v int64) int64 {
	if v >= 0 {
		return v
	}
	if v == math.MinInt64 {
		return math.MaxInt64
	}
	return -v
}

// AppendKey appends the YCSB key name of keynum to dst and returns the
// extended slice: "user" followed by the decimal number, left-padded with
// zeros to zeroPadding characters. With hashed (YCSB's insertorder=hashed, its
// default) the number is first replaced by FNVHash64(keynum); otherwise it is
// used as is (insertorder=ordered: user0, user1, …). A zeroPadding below 2
// means no padding, like YCSB's default of 1.
//
// It does not allocate when dst has room for the result (at most 24 bytes
// plus the padding), so a worker can build every key into one reused buffer.
// Like YCSB, padding counts the minus sign of a negative number as a digit;
// the choosers here never produce negative key numbers.
func AppendKey(dst []byte, keynum int64, hashed bool, zeroPadding int) []byte {
	if hashed {
		keynum = FNVHash64(keynum)
	}
	dst = append(dst, "user"...)
	var buf [20]byte // len("-9223372036854775808")
	digits := strconv.AppendInt(buf[:0], keynum, 10)
	for i := len(digits); i < zeroPadding; i++ {
		dst = append(dst, '0')
	}
	return append(dst, digits...)
}

// KeyName returns the YCSB key name of keynum as a string; see AppendKey.
// It allocates the string, so hot paths should prefer AppendKey.
func KeyName(keynum int64, hashed bool, zeroPadding int) string {
	var buf [48]byte
	return string(AppendKey(buf[:0], keynum, hashed, zeroPadding))
}
