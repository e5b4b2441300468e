package testenv

import (
	"context"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"creativeapi/internal/mailserver"
)

// mail is the test binary's Mailpit, started by the first test that asks
// for one, so packages that send no mail never start it.
var mail struct {
	once sync.Once
	srv  *mailserver.Server
	err  error
}

func startMail() {
	ctx := context.Background()
	goBin, err := osexec.LookPath("go")
	if err != nil {
		mail.err = err
		return
	}
	out, err := osexec.Command(goBin, "env", "GOMOD").Output()
	if err != nil {
		mail.err = err
		return
	}
	bin, err := mailserver.Binary(ctx, goBin, filepath.Dir(strings.TrimSpace(string(out))))
	if err != nil {
		mail.err = err
		return
	}
	// Messages stay in memory: nothing to remove afterwards. Recipients
	// at RefusedDomain are refused (550), as a real server refuses an
	// unknown mailbox.
	mail.srv, mail.err = mailserver.Start(ctx, mailserver.Options{Bin: bin, AllowedRecipients: `\.test$`})
}

// RefusedDomain is a domain the test mail server refuses permanently.
const RefusedDomain = "refused.invalid"

// stopMail stops the shared Mailpit, if started.
func stopMail() {
	if mail.srv != nil {
		_ = mail.srv.Stop()
	}
}

// NewMailServer returns the test binary's Mailpit (SMTP plus its HTTP
// API). Tests share it: each sends to addresses of its own (NewUser's are
// unique) and reads only those.
func NewMailServer(t testing.TB) *mailserver.Server {
	t.Helper()
	mail.once.Do(startMail)
	if mail.err != nil {
		t.Fatalf("the test mail server: %v", mail.err)
	}
	return mail.srv
}
