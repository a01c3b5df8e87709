package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/instance"
)

// cacheFigures is the part of dbprobe storage cache's summary the harness
// reads.
type cacheFigures struct {
	Points []struct {
		Bytes    int64   `json:"working_set_bytes"`
		HitShare float64 `json:"hit_share"`
		Settled  bool    `json:"settled"`
		Seconds  float64 `json:"seconds"`
		P50      int64   `json:"p50_us"`
		P99      int64   `json:"p99_us"`
		OSShare  float64 `json:"os_share"`
	} `json:"points"`
	Estimate struct {
		Low  int64  `json:"low_bytes"`
		High int64  `json:"high_bytes"`
		Text string `json:"text"`
	} `json:"estimate"`
	Configured    int64  `json:"configured_bytes"`
	ConfiguredHow string `json:"configured_how"`
	Layers        string `json:"layers"`
}

// cacheRun is one dbprobe storage cache run to show.
type cacheRun struct {
	name     string
	kind     instance.Kind
	settings map[string]string
	maxSize  string // "" for dbprobe's default
}

// cacheRuns measures dbprobe storage cache: the time to the estimate for
// --cache-max on PostgreSQL (shared_buffers --cache-pg), then the
// estimate beside the configured size at two settings each of PostgreSQL
// and MariaDB, with dbprobe's default --max-size (twice the setting).
func cacheRuns(ctx context.Context, c config) {
	fmt.Printf("## Cache: the estimate against the configured cache (dbprobe storage cache)\n\n")
	runs := []cacheRun{
		{"PostgreSQL", instance.Postgres, map[string]string{"shared_buffers": c.cachePG}, c.cacheMax},
		{"PostgreSQL", instance.Postgres, map[string]string{"shared_buffers": "128MB"}, ""},
		{"PostgreSQL", instance.Postgres, map[string]string{"shared_buffers": "512MB"}, ""},
		{"MariaDB", instance.MariaDB, map[string]string{"innodb_buffer_pool_size": "128M", "innodb_buffer_pool_load_at_startup": "OFF"}, ""},
		{"MariaDB", instance.MariaDB, map[string]string{"innodb_buffer_pool_size": "512M", "innodb_buffer_pool_load_at_startup": "OFF"}, ""},
	}
	fmt.Println("| database | setting | --max-size | wall time | sizes (settled) | estimate | configured | bracket ÷ configured | past the cache |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, r := range runs {
		srv := startServer(ctx, c, r.kind, r.settings)
		args := []string{"cache", "--db", srv.URL()}
		if r.maxSize != "" {
			args = append(args, "--max-size", r.maxSize)
		}
		res := dbprobeStorage(c, args...)
		srv.Close()
		f := res.sum.Cache
		if f == nil {
			fatalf("dbprobe storage cache on %s: no cache figures in its result", r.name)
		}
		settled := 0
		for _, p := range f.Points {
			if p.Settled {
				settled++
			}
		}
		ratio := "–"
		if f.Configured > 0 && f.Estimate.High > 0 {
			ratio = fmt.Sprintf("%.2f–%.2f×", float64(f.Estimate.Low)/float64(f.Configured), float64(f.Estimate.High)/float64(f.Configured))
		}
		var setting []string
		for k, v := range r.settings {
			if !strings.HasSuffix(k, "_startup") {
				setting = append(setting, k+"="+v)
			}
		}
		max := r.maxSize
		if max == "" {
			max = "default"
		}
		past := f.Layers
		if i := strings.Index(past, ": "); i >= 0 && strings.HasPrefix(past, "past") {
			past = past[i+2:]
		}
		fmt.Printf("| %s | %s | %s | %s | %d (%d) | %s | %s | %s | %s |\n", r.name, strings.Join(setting, ", "), max,
			res.wall.Round(time.Second), len(f.Points), settled, f.Estimate.Text, f.ConfiguredHow, ratio, past)
	}
	fmt.Println()
}
