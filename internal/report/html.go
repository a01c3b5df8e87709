package report

import (
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// page.js draws the charts and wires the copy buttons; page.css is the
// page's own style. Both are written into every report.
var (
	//go:embed page.js
	pageJS string
	//go:embed page.css
	pageCSS string
)

// WriteHTML writes the report as one self-contained HTML page: every
// script, style sheet and datum inside it, and a Content-Security-Policy
// that lets the page load nothing from anywhere (no network address, no
// other file), so that opening it never sends a request and a report
// can be mailed, archived or opened on an air-gapped machine.
func (r *Report) WriteHTML(w io.Writer) error {
	lib, err := chartLibrary()
	if err != nil {
		return err
	}
	p := &page{w: bufio.NewWriter(w), ids: map[string]int{}}
	for i := range r.Sections {
		r.Sections[i].ID = p.uniqueID(r.Sections[i].ID, r.Sections[i].Title)
	}
	var body strings.Builder
	p.out = &body
	for _, s := range r.Sections {
		p.section(s)
	}
	chartsJSON := p.chartsJSON()

	// The scripts and styles are allowed by their hashes, not by
	// 'unsafe-inline': only what dbprobe wrote runs.
	scripts := []string{lib.JS, pageJS}
	styles := []string{lib.CSS, pageCSS}
	csp := "default-src 'none'; script-src"
	for _, s := range scripts {
		csp += " " + hashSource(s)
	}
	csp += "; style-src"
	for _, s := range styles {
		csp += " " + hashSource(s)
	}
	csp += "; img-src data:; base-uri 'none'; form-action 'none'"

	bw := p.w
	title := html.EscapeString(r.Title)
	bw.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	bw.WriteString(`<meta http-equiv="Content-Security-Policy" content="` + csp + "\">\n")
	bw.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	// An empty icon, so the browser does not ask for /favicon.ico.
	bw.WriteString("<link rel=\"icon\" href=\"data:,\">\n")
	bw.WriteString("<title>" + title + "</title>\n")
	for _, s := range styles {
		bw.WriteString("<style>" + s + "</style>\n")
	}
	bw.WriteString("</head>\n<body>\n<header>\n<h1>" + title + "</h1>\n")
	if len(r.Sections) > 1 {
		bw.WriteString("<nav><ol>")
		for _, s := range r.Sections {
			bw.WriteString(`<li><a href="#` + html.EscapeString(s.ID) + `">` + html.EscapeString(s.Title) + "</a>")
			if s.Kind != "" {
				bw.WriteString(` <span class="kind">` + html.EscapeString(s.Kind) + "</span>")
			}
			bw.WriteString("</li>")
		}
		bw.WriteString("</ol></nav>\n")
	}
	for _, n := range r.Notices {
		bw.WriteString(`<p class="notice">` + html.EscapeString(n) + "</p>\n")
	}
	bw.WriteString("</header>\n<main>\n")
	bw.WriteString(body.String())
	bw.WriteString("</main>\n<footer>\n<p>Written by dbprobe report. Charts drawn with uPlot " + html.EscapeString(lib.Version) +
		", embedded in this page with everything else: it loads nothing from anywhere.</p>\n")
	bw.WriteString("<details><summary>uPlot's licence</summary><pre>" + html.EscapeString(lib.License) + "</pre></details>\n</footer>\n")
	bw.WriteString(`<script type="application/json" id="dbprobe-charts">` + chartsJSON + "</script>\n")
	for _, s := range scripts {
		bw.WriteString("<script>" + s + "</script>\n")
	}
	bw.WriteString("</body>\n</html>\n")
	return bw.Flush()
}

// hashSource is the CSP source that allows one inline script or style.
func hashSource(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// page collects the body's HTML and its charts.
type page struct {
	w      *bufio.Writer
	out    *strings.Builder
	charts []Chart
	ids    map[string]int
	nextID int
}

var nonID = regexp.MustCompile(`[^a-z0-9]+`)

// uniqueID returns id, or a slug of title, made unique in the page.
func (p *page) uniqueID(id, title string) string {
	if id == "" {
		id = strings.Trim(nonID.ReplaceAllString(strings.ToLower(title), "-"), "-")
	}
	if id == "" {
		id = "section"
	}
	p.ids[id]++
	if n := p.ids[id]; n > 1 {
		id += "-" + strconv.Itoa(n)
	}
	return id
}

func (p *page) elementID(prefix string) string {
	p.nextID++
	return prefix + "-" + strconv.Itoa(p.nextID)
}

func (p *page) section(s Section) {
	o := p.out
	o.WriteString(`<section id="` + html.EscapeString(s.ID) + "\">\n<h2>" + html.EscapeString(s.Title))
	if s.Kind != "" {
		o.WriteString(` <span class="kind">` + html.EscapeString(s.Kind) + "</span>")
	}
	o.WriteString("</h2>\n")
	p.blocks(s.Blocks)
	o.WriteString("</section>\n")
}

func (p *page) blocks(bs []Block) {
	for _, b := range bs {
		p.block(b)
	}
}

func (p *page) block(b Block) {
	o := p.out
	switch b := b.(type) {
	case Paragraph:
		o.WriteString("<p>" + html.EscapeString(b.Text) + "</p>\n")
	case Verdict:
		class := "verdict"
		if b.Bad {
			class += " bad"
		}
		o.WriteString(`<p class="` + class + `"><strong>` + html.EscapeString(b.Label) + ":</strong> " + html.EscapeString(b.Text) + "</p>\n")
	case Code:
		id := p.elementID("code")
		if b.Collapsed {
			o.WriteString("<details class=\"code\"><summary>" + html.EscapeString(b.Caption) + "</summary>\n")
		} else if b.Caption != "" {
			o.WriteString(`<p class="caption">` + html.EscapeString(b.Caption) + "</p>\n")
		}
		p.copyable(id, "Copy", b.Text)
		if b.Collapsed {
			o.WriteString("</details>\n")
		}
	case Group:
		if b.Collapsed {
			o.WriteString("<details class=\"group\">\n<summary><h3>" + html.EscapeString(b.Title) + "</h3></summary>\n")
			p.blocks(b.Blocks)
			o.WriteString("</details>\n")
			break
		}
		o.WriteString("<div class=\"group\">\n<h3>" + html.EscapeString(b.Title) + "</h3>\n")
		p.blocks(b.Blocks)
		o.WriteString("</div>\n")
	case Table:
		p.table(b)
	case Chart:
		n := len(p.charts)
		p.charts = append(p.charts, b)
		o.WriteString("<figure class=\"chart\">\n<figcaption>" + html.EscapeString(b.Title) + "</figcaption>\n")
		o.WriteString(`<div class="plot" data-chart="` + strconv.Itoa(n) + "\"></div>\n")
		if len(b.Bands) > 0 {
			var parts []string
			for _, bd := range b.Bands {
				parts = append(parts, bd.Label)
			}
			o.WriteString(`<p class="bands">Shaded: ` + html.EscapeString(strings.Join(parts, "; ")) + ".</p>\n")
		}
		if b.Note != "" {
			o.WriteString(`<p class="bands">` + html.EscapeString(b.Note) + "</p>\n")
		}
		o.WriteString("</figure>\n")
	default:
		panic(fmt.Sprintf("report: unknown block %T", b))
	}
}

// copyable writes a <pre> with a button that copies its text.
func (p *page) copyable(id, label, text string) {
	o := p.out
	o.WriteString(`<div class="copyable"><button type="button" class="copy" data-copy="` + id + `">` + html.EscapeString(label) + "</button>")
	o.WriteString(`<pre id="` + id + `">` + html.EscapeString(text) + "</pre></div>\n")
}

func (p *page) table(t Table) {
	o := p.out
	// The caption goes above the table rather than in a <caption>, which
	// a narrow table would wrap to its own width.
	if t.Caption != "" {
		o.WriteString(`<p class="tcaption">` + html.EscapeString(t.Caption) + "</p>\n")
	}
	o.WriteString("<div class=\"table\"><table>")
	o.WriteString("\n<thead><tr>")
	for i, h := range t.Head {
		o.WriteString(p.cell("th", i, t, h))
	}
	o.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range t.Rows {
		o.WriteString("<tr>")
		for i, c := range r {
			o.WriteString(p.cell("td", i, t, c))
		}
		o.WriteString("</tr>\n")
	}
	o.WriteString("</tbody></table></div>\n")
	o.WriteString("<details class=\"export\"><summary>This table as Markdown and CSV</summary>\n")
	p.copyable(p.elementID("md"), "Copy Markdown", t.Markdown())
	p.copyable(p.elementID("csv"), "Copy CSV", t.CSV())
	o.WriteString("</details>\n")
}

func (p *page) cell(tag string, i int, t Table, text string) string {
	class := ""
	if t.numeric(i) {
		class = ` class="num"`
	}
	return "<" + tag + class + ">" + html.EscapeString(text) + "</" + tag + ">"
}

// chartsJSON is the charts' specifications and data as the page's
// script reads them. Numbers are written by hand (num) rather than by
// encoding/json, which would spend 17 digits on each.
func (p *page) chartsJSON() string {
	var b strings.Builder
	str := func(s string) {
		// encoding/json escapes <, > and &, so no "</script" can end the
		// element early.
		j, _ := json.Marshal(s) // a string always encodes
		b.Write(j)
	}
	b.WriteString("[")
	for i, c := range p.charts {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(`{"title":`)
		str(c.Title)
		b.WriteString(`,"xLabel":`)
		str(c.XLabel)
		b.WriteString(`,"yLabel":`)
		str(c.YLabel)
		x := "seconds"
		switch c.X {
		case XNines:
			x = "nines"
		case XNumber:
			x = "number"
		}
		b.WriteString(`,"x":"` + x + `","logX":` + strconv.FormatBool(c.LogX) + `,"logY":` + strconv.FormatBool(c.LogY) + `,"points":` + strconv.FormatBool(c.Points) + `,"spanGaps":` + strconv.FormatBool(c.SpanGaps))
		b.WriteString(`,"labels":[`)
		for k, s := range c.Series {
			if k > 0 {
				b.WriteString(",")
			}
			str(s.Label)
		}
		b.WriteString(`],"styles":[`)
		for k, s := range c.Series {
			if k > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"points":` + strconv.FormatBool(s.Points) + `,"dashed":` + strconv.FormatBool(s.Dashed) + "}")
		}
		b.WriteString(`],"bands":[`)
		for k, bd := range c.Bands {
			if k > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"from":`)
			num(&b, val(bd.From))
			b.WriteString(`,"to":`)
			num(&b, val(bd.To))
			b.WriteString(`,"kind":`)
			str(bd.Kind)
			b.WriteString("}")
		}
		b.WriteString(`],"data":[[`)
		for k, x := range c.Xs {
			if k > 0 {
				b.WriteString(",")
			}
			num(&b, val(x))
		}
		b.WriteString("]")
		for _, s := range c.Series {
			b.WriteString(",[")
			for k := range c.Xs {
				if k > 0 {
					b.WriteString(",")
				}
				var v *float64
				if k < len(s.Y) {
					v = s.Y[k]
				}
				if c.LogY && v != nil && *v <= 0 {
					v = nil
				}
				num(&b, v)
			}
			b.WriteString("]")
		}
		b.WriteString("]}")
	}
	b.WriteString("]")
	return b.String()
}
