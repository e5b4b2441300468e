-- The emails someone else can make us send, kept for their ceilings
-- (internal/emailcap, docs/email.md "Ceilings").

-- name: EmailSendsAdd :exec
-- EmailSendsAdd records emails about to be sent, one per recipient.
INSERT INTO email_sends (kind, recipient, organization_id, sender_id)
SELECT @kind::text, r.recipient, sqlc.narg('organization_id')::uuid, sqlc.narg('sender_id')::uuid
FROM unnest(@recipients::text[]) AS r(recipient);

-- name: EmailSendRecipientLock :exec
-- EmailSendRecipientLock serialises the ceiling's check and record of one
-- recipient for its transaction.
SELECT pg_advisory_xact_lock(1685100, hashtext(@recipient::text));

-- name: EmailSendSenderLock :exec
-- EmailSendSenderLock serialises the invitations of one inviting user.
SELECT pg_advisory_xact_lock(1685101, hashtext(@sender::text));

-- name: EmailSendRecipientTimes :many
-- EmailSendRecipientTimes are the times of the last day's emails of the
-- kinds given to one recipient, oldest first, with the database's clock.
SELECT created_at, now()::timestamptz AS now FROM email_sends
WHERE recipient = @recipient AND kind = ANY(@kinds::text[]) AND created_at > now() - interval '1 day'
ORDER BY created_at;

-- name: EmailSendOrganizationSends :many
-- EmailSendOrganizationSends are an organization's last day of emails of
-- one kind, oldest first.
SELECT recipient, created_at FROM email_sends
WHERE organization_id = @organization_id AND kind = @kind AND created_at > now() - interval '1 day'
ORDER BY created_at;

-- name: EmailSendSenderTimes :many
-- EmailSendSenderTimes are the times of one user's last day of emails of
-- one kind, oldest first.
SELECT created_at FROM email_sends
WHERE sender_id = @sender_id AND kind = @kind AND created_at > now() - interval '1 day'
ORDER BY created_at;

-- name: EmailSendDeleteOld :execrows
-- EmailSendDeleteOld purges what no ceiling reads any more.
DELETE FROM email_sends WHERE created_at <= now() - interval '1 day';
