package report

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestChartLibraryMatchesLock proves, without the network, that the
// charting library embedded in every report is the package npm serves
// for the pinned version: the vendored tarball's SHA-512 must be the
// integrity web/package-lock.json records, and its version the one
// web/package.json pins. scripts/update-chart-lib keeps the three in
// step.
func TestChartLibraryMatchesLock(t *testing.T) {
	name, data, err := tarball()
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct {
			Version   string `json:"version"`
			Integrity string `json:"integrity"`
		} `json:"packages"`
	}
	raw, err := web.ReadFile("web/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &lock); err != nil {
		t.Fatal(err)
	}
	entry, ok := lock.Packages["node_modules/uplot"]
	if !ok {
		t.Fatal("web/package-lock.json has no node_modules/uplot")
	}
	sum := sha512.Sum512(data)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != entry.Integrity {
		t.Errorf("%s has integrity %s; the lock file says %s: run scripts/update-chart-lib", name, got, entry.Integrity)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	raw, err = os.ReadFile("web/package.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if pin := pkg.Dependencies["uplot"]; pin != entry.Version || strings.ContainsAny(pin, "^~<>=* ") {
		t.Errorf("web/package.json pins uplot %q, the lock file has %s: pin the exact version", pin, entry.Version)
	}
	lib, err := chartLibrary()
	if err != nil {
		t.Fatal(err)
	}
	if lib.Version != entry.Version {
		t.Errorf("the vendored tarball is uplot %s, the lock file has %s", lib.Version, entry.Version)
	}
	if !strings.Contains(lib.License, "MIT License") {
		t.Errorf("the tarball's LICENSE is not uPlot's MIT licence (NOTICE names it):\n%s", lib.License)
	}
}
