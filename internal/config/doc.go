// Package config turns what the user gave — YCSB properties files (-P),
// properties (-p key=value) and typed flags — into one typed configuration,
// remembering where every value came from so the run header can print what
// actually took effect. Precedence is defaults < files (in order) < -p <
// typed flags. Unknown keys are reported by name, never silently ignored.
package config
