// Package mailserver runs a private SMTP server with a web inbox as a
// child process: the mail server of `make run` (DEV_MODE without
// SMTP_URL) and of the tests, the way internal/s3server runs the object
// store. The server is Mailpit (MIT), pinned as a Go tool in
// tools/mailpit/go.mod and built from the module proxy.
//
// It listens on loopback only and never calls out: the version check and
// the reverse DNS lookup of SMTP clients are off.
package mailserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"creativeapi/internal/childproc"
)

// Package is the server's Go package, pinned in tools/mailpit/go.mod.
const Package = "github.com/axllent/mailpit"

// Options configure a server.
type Options struct {
	// Bin is the mailpit executable (see Binary).
	Bin string
	// DataDir holds the messages (DataDir/mailpit.db); empty keeps them
	// in memory only (the tests).
	DataDir string
	// AllowedRecipients, a regular expression, refuses every other
	// recipient with a permanent 550 (the tests' refusing receiver).
	AllowedRecipients string
	// Log receives the server's own output; nil discards it.
	Log io.Writer
}

// Server is a running Mailpit.
type Server struct {
	// SMTPURL is where to send (smtp://127.0.0.1:PORT, no TLS).
	SMTPURL string
	// WebURL is the inbox, and the base of its HTTP API (/api/v1/...).
	WebURL string
	proc   *childproc.Process
}

var errPortTaken = errors.New("a port was taken before mailpit bound it")

// Start starts the server on free loopback ports and waits until its API
// answers.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Bin == "" {
		return nil, errors.New("mailserver: no mailpit executable given")
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	db := ""
	if opts.DataDir != "" {
		dir, err := filepath.Abs(opts.DataDir)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
		db = filepath.Join(dir, "mailpit.db")
	}
	for attempt := 1; ; attempt++ {
		s, err := start(ctx, opts, db, logw)
		if errors.Is(err, errPortTaken) && attempt < 5 {
			continue
		}
		return s, err
	}
}

func start(ctx context.Context, opts Options, db string, logw io.Writer) (*Server, error) {
	smtpPort, err := childproc.FreePort()
	if err != nil {
		return nil, err
	}
	webPort, err := childproc.FreePort()
	if err != nil {
		return nil, err
	}
	smtpAddr := "127.0.0.1:" + strconv.Itoa(smtpPort)
	webAddr := "127.0.0.1:" + strconv.Itoa(webPort)
	args := []string{"--smtp", smtpAddr, "--listen", webAddr, "--disable-version-check", "--smtp-disable-rdns", "--quiet"}
	if db != "" {
		args = append(args, "--database", db)
	}
	if opts.AllowedRecipients != "" {
		args = append(args, "--smtp-allowed-recipients", opts.AllowedRecipients)
	}
	cmd := exec.Command(opts.Bin, args...)
	// The environment is ours alone: Mailpit reads many MP_* variables.
	cmd.Env = []string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH")}
	cmd.Stdout, cmd.Stderr = logw, logw
	proc, err := childproc.Start("mailpit", cmd)
	if err != nil {
		return nil, err
	}
	s := &Server{SMTPURL: "smtp://" + smtpAddr, WebURL: "http://" + webAddr, proc: proc}
	ready := func(ctx context.Context) error { return s.ready(ctx, smtpAddr) }
	if err := proc.WaitReady(ctx, 30*time.Second, ready); err != nil {
		_ = s.Stop()
		for _, a := range []string{smtpAddr, webAddr} {
			l, lerr := net.Listen("tcp", a)
			if lerr != nil {
				return nil, fmt.Errorf("%w: %w", errPortTaken, err)
			}
			l.Close()
		}
		return nil, err
	}
	return s, nil
}

// ready is true once the API answers with Mailpit's info and the SMTP
// port accepts connections.
func (s *Server) ready(ctx context.Context, smtpAddr string) error {
	var info struct {
		Version string
	}
	if err := s.getJSON(ctx, "/api/v1/info", &info); err != nil {
		return err
	}
	if info.Version == "" {
		return errors.New("the API answered without a version: another program on the port?")
	}
	c, err := net.DialTimeout("tcp", smtpAddr, time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// Stop shuts the server down; stopping a stopped server does nothing.
func (s *Server) Stop() error {
	s.proc.Stop(syscall.SIGTERM, 10*time.Second)
	return nil
}

// Summary is a message as Mailpit's list shows it.
type Summary struct {
	ID        string
	MessageID string
	Subject   string
	To        []Address
}

// Address is a mailbox.
type Address struct {
	Name    string
	Address string
}

// Message is one delivered message as Mailpit's API reads it.
type Message struct {
	ID        string
	MessageID string
	From      Address
	To        []Address
	Subject   string
	Text      string
	HTML      string
}

// Messages lists the delivered messages whose recipient is to (every
// message when to is empty), newest first.
func (s *Server) Messages(ctx context.Context, to string) ([]Summary, error) {
	var out struct {
		Messages []Summary
	}
	path := "/api/v1/messages?limit=1000"
	if to != "" {
		path = "/api/v1/search?limit=1000&query=" + url.QueryEscape("to:"+strconv.Quote(to))
	}
	if err := s.getJSON(ctx, path, &out); err != nil {
		return nil, err
	}
	return out.Messages, nil
}

// Message reads one message with its text and HTML parts.
func (s *Server) Message(ctx context.Context, id string) (Message, error) {
	var m Message
	err := s.getJSON(ctx, "/api/v1/message/"+url.PathEscape(id), &m)
	return m, err
}

// Headers reads one message's headers.
func (s *Server) Headers(ctx context.Context, id string) (map[string][]string, error) {
	var h map[string][]string
	err := s.getJSON(ctx, "/api/v1/message/"+url.PathEscape(id)+"/headers", &h)
	return h, err
}

func (s *Server) getJSON(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.WebURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("mailpit GET %s: %s: %s", path, resp.Status, body)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// Binary returns a mailpit executable for the tests: $MAIL_SERVER_BIN when
// set, else one built from tools/mailpit/go.mod (childproc.ToolBinary).
func Binary(ctx context.Context, goBin, moduleRoot string) (string, error) {
	return childproc.ToolBinary(ctx, goBin, moduleRoot, "MAIL_SERVER_BIN", "mailpit", "mailpit", Package)
}
