// Package email sends the product's notifications (docs/email.md): the
// SMTP sender, the messages' templates, the unsubscribe tokens and the
// River workers that send each notification once.
package email

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Message is one email to send.
type Message struct {
	// ID is the Message-ID without its angle brackets: the same for every
	// attempt of one notification, so a retried send is the same mail.
	ID      string
	To      string
	Subject string
	Text    string
	HTML    string
	// Unsubscribe is the one-click unsubscribe URL (RFC 8058); empty
	// leaves out the List-Unsubscribe headers.
	Unsubscribe string
}

// Sender sends through one SMTP server.
type Sender struct {
	from string
	opts []gomail.Option
	host string
}

// sendTimeout bounds one SMTP conversation.
const sendTimeout = 30 * time.Second

// NewSender reads smtpURL: smtp://user:pass@host:port with STARTTLS
// (mandatory on 587, the submission port; opportunistic elsewhere, so a
// local server without TLS works), or smtps://user:pass@host:port with
// implicit TLS (465 unless given).
func NewSender(smtpURL, from string) (*Sender, error) {
	u, err := url.Parse(smtpURL)
	if err != nil {
		return nil, fmt.Errorf("email: SMTP_URL: %w", err)
	}
	s := &Sender{from: from, host: u.Hostname()}
	port := 0
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("email: SMTP_URL port %q", p)
		}
	}
	s.opts = append(s.opts, gomail.WithTimeout(sendTimeout))
	switch u.Scheme {
	case "smtps":
		if port == 0 {
			port = 465
		}
		s.opts = append(s.opts, gomail.WithSSL(), gomail.WithPort(port))
	case "smtp":
		if port == 0 {
			port = 587
		}
		policy := gomail.TLSOpportunistic
		if port == 587 {
			policy = gomail.TLSMandatory
		}
		s.opts = append(s.opts, gomail.WithPort(port), gomail.WithTLSPolicy(policy))
	default:
		return nil, fmt.Errorf("email: SMTP_URL scheme %q: want smtp or smtps", u.Scheme)
	}
	if u.User != nil {
		pass, _ := u.User.Password()
		s.opts = append(s.opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(u.User.Username()), gomail.WithPassword(pass))
	}
	return s, nil
}

// ErrPermanent marks a refusal the server says will not change (an SMTP
// 5xx reply): sending again is pointless.
var ErrPermanent = errors.New("permanent SMTP refusal")

// Send sends m. A 5xx refusal wraps ErrPermanent; any other error may
// pass on a later attempt.
func (s *Sender) Send(ctx context.Context, m Message) error {
	msg := gomail.NewMsg()
	if err := msg.From(s.from); err != nil {
		return fmt.Errorf("email: From %q: %w: %w", s.from, ErrPermanent, err)
	}
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("email: To %q: %w: %w", m.To, ErrPermanent, err)
	}
	msg.Subject(m.Subject)
	msg.SetMessageIDWithValue(m.ID)
	msg.SetDate()
	msg.SetBulk()
	if m.Unsubscribe != "" {
		msg.SetGenHeaderPreformatted(gomail.HeaderListUnsubscribe, "<"+m.Unsubscribe+">")
		msg.SetGenHeader(gomail.HeaderListUnsubscribePost, "List-Unsubscribe=One-Click")
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	c, err := gomail.NewClient(s.host, s.opts...)
	if err != nil {
		return fmt.Errorf("email: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		var se *gomail.SendError
		if errors.As(err, &se) && se.ErrorCode() >= 500 && se.ErrorCode() < 600 {
			return fmt.Errorf("email: %w: %w", ErrPermanent, err)
		}
		return fmt.Errorf("email: %w", err)
	}
	return nil
}
