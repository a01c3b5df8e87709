// Package browser opens a report in headless Chromium, offline, and says
// what a reader's browser would do with it: its console errors and
// warnings, every request it made, whether each chart was drawn, and how
// long drawing took. The report's browser test and its render benchmark
// use it; dbprobe itself does not.
package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ErrNoChromium is returned by Find when no Chromium is installed.
var ErrNoChromium = errors.New("no chromium on PATH (Debian: apt-get install chromium)")

// Find returns the path of the Chromium to run: $DBPROBE_CHROMIUM, or
// the first of chromium, chromium-browser, google-chrome on PATH.
func Find() (string, error) {
	if p := os.Getenv("DBPROBE_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// Options say how to open the page.
type Options struct {
	// Width and Height are the window's size; 0 means 1200 × 900.
	Width, Height int
	// Screenshot, when above 0, takes a PNG this many pixels high at the
	// window's width, from the page's top or from the top of the first
	// element ScreenshotAt (a CSS selector) matches.
	Screenshot   int
	ScreenshotAt string
	// Timeout bounds the whole visit; 0 means one minute.
	Timeout time.Duration
	// OpenDetails opens every <details> once the first charts are drawn
	// (a run's folded section, the Markdown and CSV of a table), as a
	// reader clicking each would, and waits for the charts inside them.
	OpenDetails bool
}

// Chart is what one chart's canvas holds.
type Chart struct {
	Index  int `json:"index"`
	Width  int `json:"width"`
	Height int `json:"height"`
	// Coloured counts opaque pixels of a saturated colour: the series'
	// lines and points. Axes, grid, text and the shaded bands are grey or
	// pale, so a chart with no line drawn has none.
	Coloured int `json:"coloured"`
}

// Page is what opening a report showed.
type Page struct {
	// Console holds the console's errors and warnings, uncaught
	// exceptions, and the browser's own error and warning log entries
	// (a Content-Security-Policy violation is one).
	Console []string
	// Requests are the URLs the page asked for, the page itself left out.
	Requests []string
	// Plots is how many chart containers the page has; Drawn how many
	// charts its script says it made; Charts what each canvas holds.
	Plots  int
	Drawn  int
	Charts []Chart
	// RenderMillis is when the script had made every chart it shows on
	// opening (those of folded sections wait for them to be opened),
	// from the start of the navigation, in the page's own clock;
	// FirstMillis when it had made its first slice of them (the first
	// screen). With OpenDetails, OpenedMillis is when it had made the
	// rest, once every <details> was opened.
	RenderMillis float64
	FirstMillis  float64
	OpenedMillis float64
	// Screenshot is the PNG asked for by Options.Screenshot.
	Screenshot []byte
}

// Open opens the HTML file at path in a fresh headless Chromium (its own
// profile in a temporary directory, no background networking, no
// component updates, no sync, every host name resolving to nothing) and
// waits until its charts are drawn.
func Open(ctx context.Context, chromium, path string, o Options) (*Page, error) {
	if o.Width == 0 {
		o.Width, o.Height = 1200, 900
	}
	if o.Timeout == 0 {
		o.Timeout = time.Minute
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	profile, err := os.MkdirTemp("", "dbprobe-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)

	actx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(o.Width, o.Height),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Belt and braces: were the page to ask for a host, the name
		// would resolve to nothing rather than reach the network. The
		// request itself is still seen, and reported.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
	)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()

	// Start the browser and the tab without a deadline (a timeout on the
	// first call would stop the browser itself), then bound the visit.
	if err := chromedp.Do(bctx); err != nil {
		return nil, fmt.Errorf("starting %s: %w", chromium, err)
	}
	p := &Page{}
	var mu sync.Mutex
	pageURL := (&url.URL{Scheme: "file", Path: abs}).String()
	err = chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range ev.Args {
					if a.Value != nil {
						parts = append(parts, string(a.Value))
					} else {
						parts = append(parts, a.Description)
					}
				}
				p.Console = append(p.Console, "console."+string(ev.Type)+": "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			p.Console = append(p.Console, "exception: "+(&chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails}).Error())
		case *cdplog.EventEntryAdded:
			if e := ev.Entry; e.Level == cdplog.EntryLevelError || e.Level == cdplog.EntryLevelWarning {
				p.Console = append(p.Console, "log "+string(e.Level)+" ("+string(e.Source)+"): "+e.Text+" "+e.URL)
			}
		case *network.EventRequestWillBeSent:
			if u := ev.Request.URL; u != pageURL {
				p.Requests = append(p.Requests, u)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	vctx, cancel := context.WithTimeout(bctx, o.Timeout)
	defer cancel()
	if _, err := chromedp.Call(vctx, runtime.Enable, cdp.Empty{}); err != nil {
		return nil, fmt.Errorf("Runtime.enable: %w", err)
	}
	if _, err := chromedp.Call(vctx, cdplog.Enable, cdp.Empty{}); err != nil {
		return nil, fmt.Errorf("Log.enable: %w", err)
	}
	if _, err := chromedp.Call(vctx, network.Enable, network.EnableParams{}); err != nil {
		return nil, fmt.Errorf("Network.enable: %w", err)
	}
	if err := chromedp.Do(vctx, chromedp.Navigate(pageURL)); err != nil {
		return nil, fmt.Errorf("opening %s: %w", pageURL, err)
	}
	// The script sets data-charts-drawn once it has made every chart; a
	// script that failed never sets it, and the console says why.
	if _, err := chromedp.Run(vctx, chromedp.Poll[bool](`document.documentElement.hasAttribute("data-charts-drawn") || document.readyState === "complete" && !document.getElementById("dbprobe-charts")`)); err != nil {
		mu.Lock()
		defer mu.Unlock()
		return p, fmt.Errorf("the charts were never drawn (%w); console: %s", err, strings.Join(p.Console, " | "))
	}
	rendered, err := chromedp.Run(vctx, chromedp.Evaluate[float64](`Number(document.documentElement.getAttribute("data-charts-ms") || 0)`))
	if err != nil {
		return p, err
	}
	if o.OpenDetails {
		err := chromedp.Do(vctx,
			chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("details").forEach(d => { d.open = true; })`),
		)
		if err == nil {
			_, err = chromedp.Run(vctx, chromedp.Poll[bool](`Number(document.documentElement.getAttribute("data-charts-drawn")) === document.querySelectorAll(".plot").length`))
		}
		if err != nil {
			mu.Lock()
			defer mu.Unlock()
			return p, fmt.Errorf("the charts of the opened sections were never all drawn (%w); console: %s", err, strings.Join(p.Console, " | "))
		}
	}
	type state struct {
		Plots  int     `json:"plots"`
		Drawn  int     `json:"drawn"`
		Millis float64 `json:"millis"`
		First  float64 `json:"first"`
		Charts []Chart `json:"charts"`
	}
	st, err := chromedp.Run(vctx, chromedp.Evaluate[state](inspectJS))
	if err != nil {
		return p, fmt.Errorf("inspecting the charts: %w", err)
	}
	if o.Screenshot > 0 {
		top := 0.0
		if o.ScreenshotAt != "" {
			top, err = chromedp.Run(vctx, chromedp.Evaluate[float64](`document.querySelector(`+strconv.Quote(o.ScreenshotAt)+`).getBoundingClientRect().top + window.scrollY`))
			if err != nil {
				return p, fmt.Errorf("finding %s: %w", o.ScreenshotAt, err)
			}
		}
		shot, err := chromedp.Run(vctx, func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
			r, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
				Format:                page.CaptureScreenshotFormatPng,
				CaptureBeyondViewport: ptr(true),
				FromSurface:           ptr(true),
				Clip:                  &page.Viewport{X: 0, Y: top, Width: float64(o.Width), Height: float64(o.Screenshot), Scale: 1},
			})
			if err != nil {
				return nil, err
			}
			return r.Data, nil
		})
		if err != nil {
			return p, fmt.Errorf("screenshot: %w", err)
		}
		p.Screenshot = shot
	}
	mu.Lock()
	defer mu.Unlock()
	p.Plots, p.Drawn, p.RenderMillis, p.FirstMillis, p.Charts = st.Plots, st.Drawn, rendered, st.First, st.Charts
	if o.OpenDetails {
		p.OpenedMillis = st.Millis
	}
	return p, nil
}

func ptr[T any](v T) *T { return &v }

// inspectJS reads what each chart's canvas holds: its size, and how many
// of its pixels are opaque and saturated (a series' line or point).
const inspectJS = `(() => {
  const root = document.documentElement;
  const charts = Array.from(document.querySelectorAll(".plot")).map((el, i) => {
    const c = el.querySelector("canvas");
    if (!c || !c.width || !c.height) return {index: i, width: 0, height: 0, coloured: 0};
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let k = 0; k < d.length; k += 4) {
      if (d[k + 3] < 200) continue;
      const hi = Math.max(d[k], d[k + 1], d[k + 2]), lo = Math.min(d[k], d[k + 1], d[k + 2]);
      if (hi - lo > 60) n++;
    }
    return {index: i, width: c.width, height: c.height, coloured: n};
  });
  return {
    plots: document.querySelectorAll(".plot").length,
    drawn: Number(root.getAttribute("data-charts-drawn") || 0),
    millis: Number(root.getAttribute("data-charts-ms") || 0),
    first: Number(root.getAttribute("data-charts-first-ms") || 0),
    charts: charts,
  };
})()`
