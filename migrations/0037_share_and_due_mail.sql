-- Emails to people who are not users, and the due kind (docs/email.md,
-- docs/shares.md): a notification goes to a user (user_id) or to an
-- address (email: a guest of a share). share_invitation notifications name
-- their share; due ones are about an active review stage.
ALTER TABLE notifications DROP CONSTRAINT notifications_kind_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_kind_check
    CHECK (kind IN ('mention', 'review_requested', 'decision', 'due', 'deposit', 'share_invitation'));
ALTER TABLE notifications ALTER COLUMN user_id DROP NOT NULL;
ALTER TABLE notifications
    ADD COLUMN email text,
    ADD COLUMN share_id uuid REFERENCES shares (id) ON DELETE CASCADE,
    ADD CONSTRAINT notifications_recipient_check CHECK ((user_id IS NULL) <> (email IS NULL)),
    ADD CONSTRAINT notifications_share_check CHECK (kind <> 'share_invitation' OR share_id IS NOT NULL);

-- One per address, kind and event, as UNIQUE (event_id, user_id, kind)
-- is for users.
CREATE UNIQUE INDEX notifications_email_idx ON notifications (event_id, email, kind) WHERE email IS NOT NULL;

-- token_sealed is the share's token sealed (AES-256-GCM) for this
-- invitation's email, between the share's creation and the email's send:
-- the one place the link can be rebuilt from. Emptied once the email was
-- sent, refused or dropped.
ALTER TABLE share_invitations ADD COLUMN token_sealed bytea;
