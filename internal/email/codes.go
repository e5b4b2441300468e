package email

import (
	"time"

	"github.com/google/uuid"
)

// GuestCodeMessage is the email that carries a guest session's code
// (docs/email.md, "Codes"). It is sent by the request that asked for it,
// not by a job: the code lives 10 minutes, and no table or job argument
// holds it. msgHost is the Message-ID's host (the API's).
func GuestCodeMessage(msgHost, to, organization, code string, expiresAt time.Time) (Message, error) {
	subject := organization + ": your code to verify your email"
	it := item{Kind: "guest_code", Subject: "Your email",
		Line: "Your code is " + code + ".",
		Note: "Enter it where you asked for it, before " + expiresAt.UTC().Format("15:04 UTC") +
			". It proves that this email is yours, so that your decisions count. Never give it to anyone."}
	why := "You get this email because someone reviewing for " + organization + " asked to verify " + to +
		". If it was not you, ignore it: nothing happens without the code."
	text, html, err := render(page{Title: subject, Items: []item{it}, Why: why})
	if err != nil {
		return Message{}, err
	}
	return Message{ID: uuid.NewString() + "@" + msgHost, To: to, Subject: subject, Text: text, HTML: html}, nil
}
