//go:build !linux

package rawnet

import "net"

// Wrap returns c unchanged: raw socket calls are only used on Linux.
func Wrap(c net.Conn) net.Conn { return c }
