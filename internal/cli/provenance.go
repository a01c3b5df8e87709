package cli

import (
	"github.com/spf13/pflag"

	"github.com/dbprobe/dbprobe/internal/config"
)

// fromFlags sets, for every flag of fs that the user gave and that
// properties names, the property it stands for, with the flag as its
// source: --threads 8 is threadcount=8 from --threads. It is the one way
// a flag becomes a property, so that the header's source of a value is
// always where it was given.
func fromFlags(p *config.Properties, fs *pflag.FlagSet, properties map[string]string) {
	fs.Visit(func(f *pflag.Flag) {
		if key, ok := properties[f.Name]; ok {
			p.Set(key, f.Value.String(), "--"+f.Name)
		}
	})
}

// flagSettings lists every flag of fs that is not a property (those are in
// Config.Settings) and not skipped, with its value in force and its
// source: "default", or the flag when the user gave it. It is the one way
// the header learns where a flag's value came from.
func flagSettings(fs *pflag.FlagSet, properties map[string]string, skip ...string) []config.Setting {
	skipped := map[string]bool{"help": true}
	for _, s := range skip {
		skipped[s] = true
	}
	var out []config.Setting
	fs.VisitAll(func(f *pflag.Flag) {
		if _, ok := properties[f.Name]; ok || skipped[f.Name] {
			return
		}
		src := config.SourceDefault
		if f.Changed {
			src = "--" + f.Name
		}
		out = append(out, config.Setting{Key: f.Name, Value: config.ShownValue(f.Value.String()), Source: src})
	})
	return out
}
