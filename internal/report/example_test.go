package report_test

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/dbprobe/dbprobe/internal/report"
)

// scalingSection is a section a sweep would add: its recap table, its
// measured throughput by threads with the Universal Scalability Law's
// fit, and its verdict. The figures are made up.
func scalingSection() report.Section {
	threads := []float64{1, 2, 4, 8, 16, 32, 64}
	measured := []float64{1900, 3700, 7000, 12100, 16800, 17300, 16100}
	usl := func(n float64) float64 { // X(N) = λN / (1 + σ(N-1) + κN(N-1))
		return 1950 * n / (1 + 0.05*(n-1) + 0.0008*n*(n-1))
	}
	recap := report.Table{Caption: "Recap", Head: []string{"threads", "ops/s"}}
	meas := report.Series{Label: "measured", Points: true}
	fit := report.Series{Label: "USL fit (σ 0.05, κ 0.0008)", Dashed: true}
	for i, n := range threads {
		recap.Rows = append(recap.Rows, []string{strconv.Itoa(int(n)), strconv.FormatFloat(measured[i], 'f', 0, 64)})
		v, f := measured[i], usl(n)
		meas.Y = append(meas.Y, &v)
		fit.Y = append(fit.Y, &f)
	}
	peak := math.Sqrt((1 - 0.05) / 0.0008)
	return report.Section{
		Title: "Sweep: threads 1–64",
		Kind:  "sweep",
		Blocks: []report.Block{
			report.Verdict{Label: "Scaling", Text: fmt.Sprintf("throughput stops growing past 16 threads: +3%% from 16 to 32; the fit peaks at N* = %.0f", peak)},
			recap,
			report.Chart{Title: "Throughput by threads", XLabel: "threads", YLabel: "ops/s", X: report.XNumber, LogX: true,
				Xs: threads, Series: []report.Series{meas, fit}},
		},
	}
}

// A command that has figures of its own (a sweep's recap and scaling, a
// comparison's verdicts) adds a section of blocks to the report of its
// results, and the page draws it like the others: tables with their
// Markdown and CSV, charts with the embedded library, verdicts set
// apart. It needs to know nothing of HTML or of the chart library.
func ExampleReport_Add() {
	r := report.Build(nil) // or the results the sweep wrote
	r.Title = "dbprobe sweep: threads"
	r.Add(scalingSection())
	if err := r.WriteHTML(io.Discard); err != nil {
		fmt.Println(err)
	}
	fmt.Print(r.Sections[0].Blocks[1].(report.Table).Markdown())
	// Output:
	// | threads | ops/s |
	// |---|---:|
	// | 1 | 1900 |
	// | 2 | 3700 |
	// | 4 | 7000 |
	// | 8 | 12100 |
	// | 16 | 16800 |
	// | 32 | 17300 |
	// | 64 | 16100 |
}
