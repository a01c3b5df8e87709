package compare

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/dbprobe/dbprobe/internal/result"
)

// perTick are the prefixes of the records written once per interval: an
// hour's run holds thousands of them, each with its histograms, and a
// comparison needs none of them when the phase has its summary. The
// writer puts "type" first in every record (its records are structs), so
// the prefix names the record without decoding it.
var perTick = [][]byte{[]byte(`{"type":"interval",`), []byte(`{"type":"monitor",`)}

// readSummaries reads a result file for its headers and summaries only:
// 100 one-hour results are gigabytes of intervals, and reading them all
// (as result.Read does) would cost a comparison tens of seconds and as
// many gigabytes of memory. A file with a phase that has no summary is
// read again whole, for RecoverSummary to rebuild it from the intervals.
func readSummaries(path string) (*result.File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	br := bufio.NewReaderSize(fh, 1<<20)
	var keep bytes.Buffer
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: gather it whole.
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		// A cut last line is kept whatever it is, so that result.Read
		// sees the file was cut short.
		if !complete || !tick(line) {
			keep.Write(line)
		}
		if err == io.EOF {
			break
		}
	}
	f, err := result.Read(&keep)
	if err != nil {
		return nil, err
	}
	for _, p := range f.Phases {
		if p.Summary == nil {
			if _, err := fh.Seek(0, io.SeekStart); err != nil {
				return nil, fmt.Errorf("reading %s: %w", path, err)
			}
			return result.Read(bufio.NewReaderSize(fh, 1<<20))
		}
	}
	return f, nil
}

func tick(line []byte) bool {
	for _, p := range perTick {
		if bytes.HasPrefix(line, p) {
			return true
		}
	}
	return false
}
