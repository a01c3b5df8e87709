package driver

import (
	"fmt"
	"sort"
	"sync"
)

var (
	registryMu sync.RWMutex
	registry   = map[string]Driver{}
	// canonical maps every registered scheme to the driver's name.
	canonical = map[string]string{}
)

// Register makes a driver available under its name and URL schemes. It
// panics when a name or scheme is registered twice, as database/sql does.
func Register(name string, d Driver, schemes ...string) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if d == nil {
		panic("driver: Register of a nil driver " + name)
	}
	if _, dup := registry[name]; dup {
		panic("driver: Register called twice for " + name)
	}
	registry[name] = d
	for _, s := range append([]string{name}, schemes...) {
		if _, dup := canonical[s]; dup {
			panic("driver: scheme registered twice: " + s)
		}
		canonical[s] = name
	}
}

// Lookup returns the driver for a URL scheme and its canonical name. The
// error lists the schemes that are known.
func Lookup(scheme string) (Driver, string, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	name, ok := canonical[scheme]
	if !ok {
		return nil, "", fmt.Errorf("unknown database %q; known: %v", scheme, schemesLocked())
	}
	return registry[name], name, nil
}

// Schemes lists every registered scheme, sorted.
func Schemes() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return schemesLocked()
}

func schemesLocked() []string {
	out := make([]string, 0, len(canonical))
	for s := range canonical {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
