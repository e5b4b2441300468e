package email_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"creativeapi/internal/email"
	"creativeapi/internal/mailserver"
	"creativeapi/internal/testenv"
)

// waitFor polls the mail server until to has want messages (or fails).
func waitFor(t *testing.T, srv *mailserver.Server, to string, want int) []mailserver.Summary {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := srv.Messages(context.Background(), to)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) >= want || time.Now().After(deadline) {
			if len(got) != want {
				t.Fatalf("%s has %d messages, want %d", to, len(got), want)
			}
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestSendDeliversBothPartsAndTheUnsubscribeHeaders(t *testing.T) {
	t.Parallel()
	srv := testenv.NewMailServer(t)
	sender, err := email.NewSender(srv.SMTPURL, "Reviews <reviews@creativeapi.test>")
	if err != nil {
		t.Fatal(err)
	}
	to := "sender-both-parts@example.test"
	err = sender.Send(context.Background(), email.Message{
		ID: "n-1@creativeapi.test", To: to, Subject: "CR-000001 Launch",
		Text: "plain body", HTML: "<p>html body</p>", Unsubscribe: "https://api.example.test/api/v1/unsubscribe?token=abc",
	})
	if err != nil {
		t.Fatal(err)
	}
	list := waitFor(t, srv, to, 1)
	m, err := srv.Message(context.Background(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.MessageID != "n-1@creativeapi.test" || m.Subject != "CR-000001 Launch" || !strings.Contains(m.Text, "plain body") || !strings.Contains(m.HTML, "<p>html body</p>") {
		t.Fatalf("message: %+v", m)
	}
	h, err := srv.Headers(context.Background(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := h["List-Unsubscribe"]; len(got) != 1 || got[0] != "<https://api.example.test/api/v1/unsubscribe?token=abc>" {
		t.Fatalf("List-Unsubscribe: %q", got)
	}
	if got := h["List-Unsubscribe-Post"]; len(got) != 1 || got[0] != "List-Unsubscribe=One-Click" {
		t.Fatalf("List-Unsubscribe-Post: %q", got)
	}
	if !strings.HasPrefix(h["Content-Type"][0], "multipart/alternative") {
		t.Fatalf("Content-Type: %q", h["Content-Type"])
	}
}

func TestARefusedRecipientIsAPermanentError(t *testing.T) {
	t.Parallel()
	srv := testenv.NewMailServer(t)
	sender, err := email.NewSender(srv.SMTPURL, "reviews@creativeapi.test")
	if err != nil {
		t.Fatal(err)
	}
	err = sender.Send(context.Background(), email.Message{ID: "n-2@creativeapi.test", To: "nobody@" + testenv.RefusedDomain, Subject: "s", Text: "t", HTML: "h"})
	if !errors.Is(err, email.ErrPermanent) {
		t.Fatalf("got %v, want ErrPermanent", err)
	}
}

func TestAnUnreachableServerIsNotPermanent(t *testing.T) {
	t.Parallel()
	sender, err := email.NewSender("smtp://127.0.0.1:1", "reviews@creativeapi.test")
	if err != nil {
		t.Fatal(err)
	}
	err = sender.Send(context.Background(), email.Message{ID: "n-3@creativeapi.test", To: "a@example.test", Subject: "s", Text: "t", HTML: "h"})
	if err == nil || errors.Is(err, email.ErrPermanent) {
		t.Fatalf("got %v, want a temporary error", err)
	}
}
