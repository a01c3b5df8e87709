//go:build !linux

package rawnet

import "net"

// supported says raw calls are made on this system.
const supported = false

// Wrap returns c unchanged: raw socket calls are only used on Linux.
func Wrap(c net.Conn) net.Conn { return c }
