// Package report renders dbprobe results as one self-contained HTML page
// (dbprobe report): for a run its settings and environment, throughput,
// latency percentiles over time per operation, the percentile spectrum
// from its HDR histograms, failures, retries and outages on the timeline,
// the monitor's waits and its verdict; a storage run's rate second by
// second and its verdict; a stress run's statements; for several results,
// overlays with one line per result, named by the settings that differ.
//
// The page is a Report of Sections, each a list of Blocks (Paragraph,
// Verdict, Table, Chart, Code, Group). Build makes the sections of result
// files, one kind of section per experiment; another command adds its own
// (a sweep's recap and scaling curves, compare's verdicts) with
// Report.Add before WriteHTML, without knowing HTML or the chart library.
//
// Charts are drawn by uPlot, whose npm tarball is vendored in web/vendor
// and embedded, checked against web/package-lock.json's integrity by a
// test; scripts/update-chart-lib replaces it. Every script, style and
// datum is inside the page, and its Content-Security-Policy lets it load
// nothing, so that opening a report never sends a request.
//
// A page of many long results is summarised before it is written
// (Report.AutoBuckets, Report.Downsample): each chart over time is cut
// into spans that keep each line's lowest and highest value, so the page
// stays small enough to open and a spike still shows.
//
// Like result, the package formats only: it knows no database.
package report
