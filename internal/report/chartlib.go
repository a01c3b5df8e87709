package report

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// The charting library is uPlot (MIT), installed from npm at the version
// web/package.json pins. Its npm tarball itself is vendored under
// web/vendor/ and embedded: its SHA-512 is what web/package-lock.json
// records as the package's integrity, so a test can prove, without the
// network, that the code in every report is the code npm serves for that
// version. scripts/update-chart-lib fetches a new version.
//
//go:embed web/vendor/*.tgz web/package-lock.json
var web embed.FS

// chartFiles are the files of the library a report embeds.
type chartFiles struct {
	Version string
	JS, CSS string
	License string
}

var (
	chartOnce sync.Once
	chartLib  chartFiles
	chartErr  error
)

// chartLibrary returns uPlot's script, style sheet and licence, read
// once from the embedded tarball.
func chartLibrary() (chartFiles, error) {
	chartOnce.Do(func() { chartLib, chartErr = readChartLibrary() })
	return chartLib, chartErr
}

// tarball returns the one vendored tarball's name and bytes.
func tarball() (string, []byte, error) {
	names, err := fs.Glob(web, "web/vendor/*.tgz")
	if err != nil || len(names) != 1 {
		return "", nil, fmt.Errorf("report: want one chart library tarball in web/vendor, found %d", len(names))
	}
	data, err := web.ReadFile(names[0])
	return names[0], data, err
}

func readChartLibrary() (chartFiles, error) {
	name, data, err := tarball()
	if err != nil {
		return chartFiles{}, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return chartFiles{}, fmt.Errorf("report: %s: %w", name, err)
	}
	files := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return chartFiles{}, fmt.Errorf("report: %s: %w", name, err)
		}
		switch h.Name {
		case "package/dist/uPlot.iife.min.js", "package/dist/uPlot.min.css", "package/LICENSE":
			b, err := io.ReadAll(tr)
			if err != nil {
				return chartFiles{}, fmt.Errorf("report: %s: %w", name, err)
			}
			files[h.Name] = string(b)
		}
	}
	f := chartFiles{
		Version: strings.TrimSuffix(strings.TrimPrefix(path.Base(name), "uplot-"), ".tgz"),
		JS:      files["package/dist/uPlot.iife.min.js"],
		CSS:     files["package/dist/uPlot.min.css"],
		License: files["package/LICENSE"],
	}
	if f.JS == "" || f.CSS == "" || f.License == "" {
		return chartFiles{}, fmt.Errorf("report: %s lacks uPlot's dist files or its licence", name)
	}
	// The script goes inside a <script> element: a "</script" in it would
	// end the element early. The minified build has none; say so loudly
	// if a new version does rather than write a broken page.
	if strings.Contains(strings.ToLower(f.JS), "</script") {
		return chartFiles{}, fmt.Errorf("report: %s: its script contains </script", name)
	}
	return f, nil
}
