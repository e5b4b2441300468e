package config_test

import (
	"strings"
	"testing"

	"creativeapi/internal/config"
)

func TestEmailIsOffInProductionWithoutSMTPURL(t *testing.T) {
	t.Parallel()
	c, err := load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.EmailEnabled() || c.PrivateMail() || c.DigestHour != 8 {
		t.Fatalf("production defaults: email %v, private %v, digest hour %d", c.EmailEnabled(), c.PrivateMail(), c.DigestHour)
	}
	dev, err := load(map[string]string{"DEV_MODE": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if !dev.PrivateMail() || dev.UnsubscribeSecret != config.DevUnsubscribeSecret || dev.AppURL != dev.PublicBaseURL {
		t.Fatalf("development defaults: %+v", dev)
	}
	given, err := load(map[string]string{"DEV_MODE": "true", "SMTP_URL": "smtp://127.0.0.1:1025"})
	if err != nil || given.PrivateMail() {
		t.Fatalf("SMTP_URL in development: private %v, %v", given.PrivateMail(), err)
	}
}

func TestEmailSettingsAreValidated(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("s", 32)
	for _, tc := range []struct {
		name string
		vars map[string]string
		want string
	}{
		{"a bad scheme", map[string]string{"SMTP_URL": "http://mail", "MAIL_FROM": "a@b.test", "UNSUBSCRIBE_SECRET": secret}, "SMTP_URL: want smtp://"},
		{"no from", map[string]string{"SMTP_URL": "smtp://mail:587", "UNSUBSCRIBE_SECRET": secret}, "SMTP_URL is set without MAIL_FROM"},
		{"a bad from", map[string]string{"MAIL_FROM": "not an address"}, "MAIL_FROM="},
		{"no secret", map[string]string{"SMTP_URL": "smtps://u:p@mail", "MAIL_FROM": "a@b.test"}, "without UNSUBSCRIBE_SECRET"},
		{"the development secret", map[string]string{"SMTP_URL": "smtps://mail", "MAIL_FROM": "a@b.test", "UNSUBSCRIBE_SECRET": config.DevUnsubscribeSecret}, "published development secret"},
		{"a short secret", map[string]string{"SMTP_URL": "smtps://mail", "MAIL_FROM": "a@b.test", "UNSUBSCRIBE_SECRET": "short"}, "at least 32 bytes"},
		{"a bad hour", map[string]string{"DIGEST_HOUR": "24"}, "DIGEST_HOUR=24"},
		{"a bad app URL", map[string]string{"APP_URL": "app.example.com"}, "APP_URL="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := load(tc.vars); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := load(map[string]string{"SMTP_URL": "smtp://u:p@mail:587", "MAIL_FROM": "Reviews <r@b.test>", "UNSUBSCRIBE_SECRET": secret, "APP_URL": "https://app.example.com/"}); err != nil {
		t.Fatalf("a full production setting: %v", err)
	}
}
