package report

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/result"
)

// maxWaitLines is how many wait events the waits chart draws: the
// busiest; the rest are added up as "other waits", so that the chart
// stays readable and nothing is hidden.
const maxWaitLines = 8

// monitorBlocks are the monitor's samples over time: the sessions'
// waits, the host's and the client's CPU, and the figures behind the
// verdict.
func monitorBlocks(ru *run) []Block {
	ms := ru.phase.Monitor
	if len(ms) == 0 {
		return nil
	}
	xs := make([]float64, len(ms))
	for i, m := range ms {
		xs[i] = m.End.Sub(ru.start).Seconds()
	}
	var out []Block
	if c, ok := waitsChart(ms, xs, ru.bands()); ok {
		out = append(out, c)
	}
	cpu := Chart{Title: "CPU over time, as the monitor sampled it", XLabel: "elapsed (s)", YLabel: "%", Xs: xs, Bands: ru.bands()}
	for _, f := range []struct{ label, name string }{
		{"host busy % (all CPUs)", "host.cpu.idle%"},
		{"host iowait %", "host.cpu.iowait%"},
		{"host steal %", "host.cpu.steal%"},
		{"client CPU % of one core", "client.cpu%"},
	} {
		s := Series{Label: f.label}
		have := false
		for _, m := range ms {
			v, ok := m.Metrics[f.name]
			if ok && f.name == "host.cpu.idle%" {
				v = 100 - v
			}
			if ok {
				have = true
				s.Y = append(s.Y, val(v))
			} else {
				s.Y = append(s.Y, nil)
			}
		}
		if have {
			cpu.Series = append(cpu.Series, s)
		}
	}
	if len(cpu.Series) > 0 {
		out = append(out, cpu)
	}
	if s := ru.summary; s != nil && s.Diagnosis != nil && len(s.Diagnosis.Evidence) > 0 {
		t := Table{Caption: "The figures behind the bottleneck verdict (" + s.Diagnosis.Limit + "), averaged over the phase", Head: []string{"figure", "average"}}
		for _, k := range slices.Sorted(maps.Keys(s.Diagnosis.Evidence)) {
			t.Rows = append(t.Rows, []string{k, figure(s.Diagnosis.Evidence[k])})
		}
		out = append(out, t)
	}
	return out
}

// figure says a monitor figure with at most three decimals.
func figure(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// waitsChart draws what dbprobe's sessions waited on, sample by sample:
// each event's share of the sampled active sessions times how many were
// active, that is the average number of sessions in that wait. Without
// a count of active sessions, the shares themselves in percent.
func waitsChart(ms []result.MonitorSample, xs []float64, bands []Band) (Chart, bool) {
	totals := map[string]float64{}
	haveActive := false
	for _, m := range ms {
		if _, ok := m.Metrics["db.sessions.active"]; ok {
			haveActive = true
		}
		for name, v := range m.Metrics {
			if ev, ok := strings.CutPrefix(name, "db.wait."); ok && !strings.HasPrefix(ev, "other.") {
				totals[ev] += v
			}
		}
	}
	if len(totals) == 0 {
		return Chart{}, false
	}
	events := slices.Collect(maps.Keys(totals))
	sort.Slice(events, func(i, j int) bool {
		if totals[events[i]] != totals[events[j]] {
			return totals[events[i]] > totals[events[j]]
		}
		return events[i] < events[j]
	})
	shown, rest := events, []string(nil)
	if len(events) > maxWaitLines {
		shown, rest = events[:maxWaitLines-1], events[maxWaitLines-1:]
	}
	scale := func(m result.MonitorSample, share float64) float64 {
		if haveActive {
			return share * m.Metrics["db.sessions.active"]
		}
		return share * 100
	}
	c := Chart{Title: "The monitor's waits over time", XLabel: "elapsed (s)", Xs: xs, Bands: bands}
	if haveActive {
		c.YLabel = "sessions in the wait (average)"
	} else {
		c.YLabel = "% of sampled sessions"
	}
	for _, ev := range shown {
		s := Series{Label: ev}
		for _, m := range ms {
			if v, ok := m.Metrics["db.wait."+ev]; ok {
				s.Y = append(s.Y, val(scale(m, v)))
			} else {
				s.Y = append(s.Y, val(0))
			}
		}
		c.Series = append(c.Series, s)
	}
	if len(rest) > 0 {
		s := Series{Label: "other waits (" + strconv.Itoa(len(rest)) + " events)"}
		for _, m := range ms {
			sum := 0.0
			for _, ev := range rest {
				sum += scale(m, m.Metrics["db.wait."+ev])
			}
			s.Y = append(s.Y, val(sum))
		}
		c.Series = append(c.Series, s)
	}
	return c, true
}
