package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"

	"creativeapi/internal/config"
	"creativeapi/internal/email"
	"creativeapi/internal/mailserver"
)

// openMail returns the sender of SMTP_URL or, in development mode when
// SMTP_URL is unset, starts the private Mailpit under DATA_DIR/mail and
// sends there. It returns nil (email off, said once here) outside
// development mode without SMTP_URL, or in development mode when Mailpit
// is not built. close stops whatever it started.
func openMail(ctx context.Context, cfg config.Config, log *slog.Logger) (sender *email.Sender, line string, close func(), err error) {
	if !cfg.EmailEnabled() {
		log.Warn("SMTP_URL is not set: email is off (no notification is sent)")
		return nil, "", func() {}, nil
	}
	if !cfg.PrivateMail() {
		sender, err := email.NewSender(cfg.SMTPURL, cfg.MailFrom)
		if err == nil {
			log.Info("email on", "smtp", redactedSMTP(cfg.SMTPURL), "from", cfg.MailFrom)
		}
		return sender, "", func() {}, err
	}
	if _, err := os.Stat(cfg.MailServerBin); errors.Is(err, os.ErrNotExist) {
		log.Warn("the private mail server is not built: email is off (run make mail-server, or make run)", "MAIL_SERVER_BIN", cfg.MailServerBin)
		return nil, "", func() {}, nil
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, "", nil, err
	}
	mailLog, err := os.OpenFile(filepath.Join(cfg.DataDir, "mail.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, "", nil, fmt.Errorf("open the mail server's log: %w", err)
	}
	srv, err := mailserver.Start(ctx, mailserver.Options{Bin: cfg.MailServerBin, DataDir: filepath.Join(cfg.DataDir, "mail"), Log: mailLog})
	if err != nil {
		mailLog.Close()
		return nil, "", nil, fmt.Errorf("start the private mail server: %w", err)
	}
	log.Info("private mail server started", "smtp", srv.SMTPURL, "inbox", srv.WebURL, "log", mailLog.Name())
	line = fmt.Sprintf("  Mail  %s (Mailpit inbox of every email sent; SMTP %s)\n", srv.WebURL, srv.SMTPURL)
	if sender, err = email.NewSender(srv.SMTPURL, cfg.MailFrom); err != nil {
		_ = srv.Stop()
		mailLog.Close()
		return nil, "", nil, err
	}
	return sender, line, func() { _ = srv.Stop(); mailLog.Close() }, nil
}

// redactedSMTP is SMTP_URL without its password, for the log.
func redactedSMTP(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable)"
	}
	return u.Redacted()
}
