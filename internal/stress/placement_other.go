//go:build !unix

package stress

// ownerOf names the OS user that owns path; this system's owners are not
// read, so "".
func ownerOf(string) string { return "" }
