package email

import (
	"bytes"
	"encoding/json"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"time"

	"creativeapi/gen/db"
	"creativeapi/internal/money"
)

// item is one notification as an email shows it, alone or in a digest.
type item struct {
	Kind string
	// Subject names the creative (CR-000123 Title) or the deposit.
	Subject string
	// Line says what happened, in a sentence.
	Line string
	// Quote is the comment, when there is one.
	Quote string
	// Note says more, when there is more to say.
	Note string
	// Link is the resource under APP_URL (none: no link).
	Link string
}

// detail is what NotificationsCreate stored of the event.
type detail struct {
	Body     string  `json:"body"`
	Decision string  `json:"decision"`
	Comment  *string `json:"comment"`
	Status   string  `json:"status"`
	// Due (soon or overdue), Stage and DueAt are a due date's; Stage is
	// also a review request's when a review plan made it.
	Due   string     `json:"due"`
	Stage string     `json:"stage"`
	DueAt *time.Time `json:"dueAt"`
}

// describe makes the item of notification n; appURL has no trailing slash.
func describe(n db.NotificationGetRow, appURL string) (item, error) {
	var d detail
	if err := json.Unmarshal(n.Detail, &d); err != nil {
		return item{}, fmt.Errorf("email: notification %s detail: %w", n.ID, err)
	}
	actor := "Someone"
	if n.ActorName != nil && *n.ActorName != "" {
		actor = *n.ActorName
	}
	it := item{Kind: n.Kind}
	if n.CreativeID != nil && n.OrganizationID != nil {
		it.Subject = creativeName(n.CreativeNumber, n.CreativeTitle)
		it.Link = fmt.Sprintf("%s/organizations/%s/creatives/%s", appURL, n.OrganizationID, n.CreativeID)
	}
	switch n.Kind {
	case "mention":
		it.Line = actor + " mentioned you in a comment on " + it.Subject + "."
		it.Quote = d.Body
		if n.CommentID != nil {
			it.Link += "#comment-" + n.CommentID.String()
		}
	case "review_requested":
		it.Line = actor + " asks you to review " + it.Subject + "."
		if d.Stage != "" {
			it.Line = stageLine(it.Subject, d)
		}
	case "decision":
		verb := "approved"
		if d.Decision == "request_changes" {
			verb = "requested changes to"
		}
		it.Line = actor + " " + verb + " " + it.Subject + "."
		if d.Comment != nil {
			it.Quote = *d.Comment
		}
	case "due":
		it.Line = dueLine(it.Subject, d)
	case "deposit":
		amount := usdt(n.RequestedAmountMinor)
		var what string
		switch d.Status {
		case "credited":
			amount = usdt(n.CreditedAmountMinor)
			what = "was credited to your balance"
		case "under_review":
			what = "is under review: an operator checks the transfer"
		default:
			what = "was refunded"
		}
		it.Subject = "Deposit of " + amount
		it.Line = "Your deposit of " + amount + " " + what + "."
		it.Link = fmt.Sprintf("%s/balance/deposits/%s", appURL, n.DepositID)
	default:
		return item{}, fmt.Errorf("email: unknown kind %q", n.Kind)
	}
	return it, nil
}

// dueLine says which stage of creative waits for the reader's decision,
// and by when.
func dueLine(creative string, d detail) string {
	state, at := "is overdue", " since "
	if d.Due == "soon" {
		state, at = "is due", " on "
	}
	if d.DueAt != nil {
		state += at + d.DueAt.UTC().Format("2 January 2006 15:04 UTC")
	}
	return "The stage “" + d.Stage + "” of " + creative + " " + state + ", and waits for your decision."
}

// stageLine says which stage of creative became active (a submit, or the
// approval of the stage before) and waits for the reader's review.
func stageLine(creative string, d detail) string {
	return "The stage “" + d.Stage + "” of " + creative + " is now active and waits for your review."
}

// subjectOf is the email subject of one notification.
func subjectOf(it item, d detail) string {
	switch it.Kind {
	case "mention":
		return it.Subject + ": you were mentioned"
	case "review_requested":
		return it.Subject + ": review requested"
	case "decision":
		if d.Decision == "request_changes" {
			return it.Subject + ": changes requested"
		}
		return it.Subject + ": approved"
	case "due":
		if d.Due == "soon" {
			return it.Subject + ": review due soon"
		}
		return it.Subject + ": review overdue"
	default:
		return it.Subject + ": " + strings.ReplaceAll(d.Status, "_", " ")
	}
}

// page is what the templates read. An email to a user has Unsubscribe
// and Settings; one to an address (a guest) has neither, and Why says why
// it came.
type page struct {
	Title       string
	Items       []item
	Unsubscribe string
	Settings    string
	Why         string
}

var textTemplate = texttemplate.Must(texttemplate.New("text").Parse(`{{range .Items}}{{.Line}}
{{if .Quote}}
  "{{.Quote}}"
{{end}}{{if .Note}}
{{.Note}}
{{end}}{{if .Link}}
{{.Link}}
{{end}}
{{end}}--
{{if .Unsubscribe}}Choose which emails you get: {{.Settings}}
Unsubscribe from these: {{.Unsubscribe}}
{{else}}{{.Why}}
{{end}}`))

// htmlTemplate escapes every value it prints (html/template).
var htmlTemplate = htmltemplate.Must(htmltemplate.New("html").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body style="font-family:sans-serif">
{{range .Items}}<p>{{.Line}}</p>
{{if .Quote}}<blockquote>{{.Quote}}</blockquote>
{{end}}{{if .Note}}<p>{{.Note}}</p>
{{end}}{{if .Link}}<p><a href="{{.Link}}">Open it</a></p>
{{end}}{{end}}<hr>
{{if .Unsubscribe}}<p style="font-size:small"><a href="{{.Settings}}">Choose which emails you get</a> · <a href="{{.Unsubscribe}}">Unsubscribe from these</a></p>
{{else}}<p style="font-size:small">{{.Why}}</p>
{{end}}
</body></html>
`))

// render writes both parts of p.
func render(p page) (text, html string, err error) {
	var t, h bytes.Buffer
	if err := textTemplate.Execute(&t, p); err != nil {
		return "", "", err
	}
	if err := htmlTemplate.Execute(&h, p); err != nil {
		return "", "", err
	}
	return t.String(), h.String(), nil
}

// usdt writes minor units of USDT as a decimal amount: 10004200 is
// "10.0042 USDT".
func usdt(minor int64) string {
	scale := int(money.USDT.Scale)
	s := fmt.Sprintf("%0*d", scale+1, minor)
	whole, frac := s[:len(s)-scale], strings.TrimRight(s[len(s)-scale:], "0")
	if frac == "" {
		return whole + " USDT"
	}
	return whole + "." + frac + " USDT"
}
