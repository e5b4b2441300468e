package httpapi

import (
	"bytes"
	"html/template"
	"net/http"

	"github.com/labstack/echo/v4"

	"creativeapi/internal/problem"
)

// problemPagesCSP lets the pages load nothing: their style is inline.
const problemPagesCSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"

// problemPageTemplate renders GET /problems/<code> (one code) and
// GET /problems (all of them), the `type` URLs of Problems: plain HTML that
// loads nothing, in the fonts and colours of the reference at /docs.
var problemPageTemplate = template.Must(template.New("problem").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{if .One}}{{.One.Code}}: {{.One.Title}} · {{end}}Problems · Creative review and account deposit API</title>
<style>
body{margin:0;font-family:system-ui,-apple-system,BlinkMacSystemFont,'Segoe UI','Roboto','Oxygen','Ubuntu','Cantarell','Fira Sans','Droid Sans','Helvetica Neue',Arial,sans-serif;color:#1a1c21;background:#fff;line-height:1.6}
header{background:#f7f7f7;border-bottom:1px solid #e4e4e4;padding:12px 40px}
header a{color:#1a1c21;text-decoration:none;font-weight:600}
main{max-width:860px;padding:24px 40px}
h1{font-size:28px;font-weight:600;margin:16px 0 4px}
h2{font-size:20px;font-weight:600;margin:32px 0 4px}
h3{font-size:15px;text-transform:uppercase;letter-spacing:.04em;color:#5b5f66;margin:20px 0 2px}
code{font-family:ui-monospace,Menlo,Monaco,'Cascadia Mono','Segoe UI Mono','Roboto Mono','Ubuntu Mono','Courier New',monospace;background:#f3f4f6;border-radius:4px;padding:1px 5px;font-size:90%}
.status{display:inline-block;border-radius:4px;padding:0 8px;font-size:14px;font-weight:600;color:#fff;background:#d41f1c}
.status.s4{background:#c25a00}
a{color:#3863ff}
ul{padding-left:20px}
</style>
</head>
<body>
<header><a href="/docs">Creative review and account deposit API</a> · <a href="/problems">Problems</a></header>
<main>
{{with .One}}
<h1><code>{{.Code}}</code> {{.Title}}</h1>
<p><span class="status{{if lt .Status 500}} s4{{end}}">{{.Status}}</span></p>
<h3>What it means</h3><p>{{.Means}}</p>
<h3>When it happens</h3><p>{{.When}}</p>
<h3>What to do</h3><p>{{.Do}}</p>
<p>Every error answer is a Problem: its <code>type</code> is this page, its <code>code</code> is <code>{{.Code}}</code>, its <code>detail</code> explains the occurrence and its <code>traceId</code> names the request in the server's log. <a href="/problems">Every code</a> · <a href="/docs">the reference</a></p>
{{else}}
<h1>Problems</h1>
<p>Every error answer is a Problem whose <code>type</code> is the page of its <code>code</code> below. New codes may be added: treat an unknown code by its HTTP status.</p>
<ul>
{{range .All}}<li><a href="/problems/{{.Code}}"><code>{{.Code}}</code></a> <span class="status{{if lt .Status 500}} s4{{end}}">{{.Status}}</span> {{.Means}}</li>
{{end}}</ul>
{{end}}
</main>
</body>
</html>
`))

// problemPageView is one code's page in the template.
type problemPageView struct {
	Code  problem.Code
	Title string
	problem.Page
}

// problemPages renders every page once, at start-up.
func problemPages() (index []byte, byCode map[string][]byte, err error) {
	var all []problemPageView
	for _, c := range problem.Codes() {
		all = append(all, problemPageView{Code: c, Title: problem.Title(c), Page: problem.Pages[c]})
	}
	render := func(data any) ([]byte, error) {
		var b bytes.Buffer
		err := problemPageTemplate.Execute(&b, data)
		return b.Bytes(), err
	}
	if index, err = render(struct {
		One *problemPageView
		All []problemPageView
	}{All: all}); err != nil {
		return nil, nil, err
	}
	byCode = make(map[string][]byte, len(all))
	for i := range all {
		if byCode[string(all[i].Code)], err = render(struct{ One *problemPageView }{&all[i]}); err != nil {
			return nil, nil, err
		}
	}
	return index, byCode, nil
}

// registerProblemPages serves the pages of the Problem type URLs.
func registerProblemPages(e *echo.Echo) error {
	index, byCode, err := problemPages()
	if err != nil {
		return err
	}
	e.GET("/problems", func(c echo.Context) error {
		c.Response().Header().Set("Content-Security-Policy", problemPagesCSP)
		return c.HTMLBlob(http.StatusOK, index)
	})
	e.GET("/problems/:code", func(c echo.Context) error {
		page, ok := byCode[c.Param("code")]
		if !ok {
			return echo.ErrNotFound
		}
		c.Response().Header().Set("Content-Security-Policy", problemPagesCSP)
		return c.HTMLBlob(http.StatusOK, page)
	})
	return nil
}
