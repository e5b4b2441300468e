package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"creativeapi/internal/mailserver"
	"creativeapi/internal/testenv"
)

// TestDevModeStartsItsOwnMailServer: with Mailpit built and no SMTP_URL,
// DEV_MODE starts one under DATA_DIR/mail and prints its inbox.
func TestDevModeStartsItsOwnMailServer(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin, err := mailserver.Binary(context.Background(), goBin, root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := testenv.NewDB(t)
	vars := map[string]string{"DEV_MODE": "true", "DATABASE_URL": db.URL, "DATA_DIR": dir, "ADDR": "127.0.0.1:0",
		"LOG_LEVEL": "error", "MAIL_SERVER_BIN": bin}
	out := serveUntilUp(t, vars)
	if !regexp.MustCompile(`Mail  http://127\.0\.0\.1:\d+ \(Mailpit inbox`).MatchString(out) {
		t.Fatalf("serve did not start the private mail server:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "mail", "mailpit.db")); err != nil {
		t.Fatalf("no Mailpit data under DATA_DIR/mail: %v", err)
	}
}

// TestSMTPURLIsHonouredInDevMode: with SMTP_URL, serve starts no Mailpit
// and sends there; the demo data's review requests and decisions arrive.
func TestSMTPURLIsHonouredInDevMode(t *testing.T) {
	t.Parallel()
	mail := testenv.NewMailServer(t)
	db := testenv.NewDB(t)
	dir := t.TempDir()
	vars := map[string]string{"DEV_MODE": "true", "DATABASE_URL": db.URL, "DATA_DIR": dir, "ADDR": "127.0.0.1:0",
		"LOG_LEVEL": "error", "SMTP_URL": mail.SMTPURL, "MAIL_SERVER_BIN": filepath.Join(dir, "no-mailpit-here")}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--seed"}, envOf(vars), strings.NewReader(""), &stdout, &stderr)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, err := mail.Messages(context.Background(), "author@acme.test")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no email reached the SMTP_URL server:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Contains(stderr.String(), "Mailpit inbox") {
		t.Errorf("serve started a Mailpit of its own despite SMTP_URL:\n%s", stderr.String())
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
