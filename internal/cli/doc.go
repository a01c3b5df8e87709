// Package cli holds dbprobe's cobra commands, one file each. Flags become
// typed configuration here and nowhere else; the commands then hand the
// work to the runner and the output to the result package.
package cli
