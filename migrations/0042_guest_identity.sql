-- A guest is who their inbox says (docs/shares.md).

-- Each invitation has a link of its own: its token's SHA-256 is kept
-- (the token itself only sealed for its email until sent). Invitations
-- made before have none: their links open unverified sessions.
ALTER TABLE share_invitations ADD COLUMN token_hash bytea UNIQUE CHECK (length(token_hash) = 32);

-- verified belongs to the session: opened with an invitation's token, or
-- confirmed by a code mailed to its email. Existing sessions are
-- unverified. name is the name the session was opened with: a comment
-- keeps its author's as written, so no other session renames it. The
-- code is the session's pending email code (its SHA-256), with its
-- expiry and its wrong tries.
ALTER TABLE guest_sessions
    ADD COLUMN verified boolean NOT NULL DEFAULT false,
    ADD COLUMN name text NOT NULL DEFAULT '',
    ADD COLUMN code_hash bytea,
    ADD COLUMN code_expires_at timestamptz,
    ADD COLUMN code_failures smallint NOT NULL DEFAULT 0;
UPDATE guest_sessions gs SET name = g.name FROM guests g WHERE g.id = gs.guest_id;
ALTER TABLE guest_sessions ALTER COLUMN name DROP DEFAULT;
ALTER TABLE guest_sessions ADD CONSTRAINT guest_sessions_code_check
    CHECK ((code_hash IS NULL) = (code_expires_at IS NULL));

-- A guest's comment keeps the name and the verification of the session
-- that wrote it; a guest's decision its verification. Rows from before
-- are unverified (null: as a member's, false when a guest's).
ALTER TABLE comments
    ADD COLUMN author_guest_name text,
    ADD COLUMN author_verified boolean;
UPDATE comments cm SET author_guest_name = g.name, author_verified = false
FROM guests g WHERE g.id = cm.author_guest_id;
ALTER TABLE comments ADD CONSTRAINT comments_author_guest_name_check
    CHECK ((author_guest_id IS NULL) = (author_guest_name IS NULL) AND (author_guest_id IS NULL) = (author_verified IS NULL));
ALTER TABLE creative_events ADD COLUMN actor_verified boolean;
UPDATE creative_events SET actor_verified = false WHERE actor_guest_id IS NOT NULL;
ALTER TABLE creative_events ADD CONSTRAINT creative_events_actor_verified_check
    CHECK ((actor_guest_id IS NULL) = (actor_verified IS NULL));
ALTER TABLE review_decisions ADD COLUMN guest_verified boolean;
UPDATE review_decisions SET guest_verified = false WHERE guest_id IS NOT NULL;

-- comments_shown lists comments' columns: made again to show the new
-- ones, a guest's comment named as it was written.
DROP VIEW comments_shown;
CREATE VIEW comments_shown AS
SELECT cm.*, coalesce(au.name, cm.author_guest_name, ag.name) AS author_name, coalesce(rb.name, rg.name, '') AS resolved_by_name,
       ARRAY(SELECT coalesce(u.name, '')
             FROM unnest(cm.mention_user_ids) WITH ORDINALITY AS m (user_id, n)
             LEFT JOIN users u ON u.id = m.user_id
             ORDER BY m.n)::text[] AS mention_names
FROM comments cm
LEFT JOIN users au ON au.id = cm.author_id
LEFT JOIN guests ag ON ag.id = cm.author_guest_id
LEFT JOIN users rb ON rb.id = cm.resolved_by
LEFT JOIN guests rg ON rg.id = cm.resolved_by_guest_id;

-- share_openers are the client addresses that opened a share: once a
-- share has had 100 wrong passwords in an hour, only they may try.
CREATE TABLE share_openers (
    share_id   uuid NOT NULL REFERENCES shares (id) ON DELETE CASCADE,
    address    text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (share_id, address)
);

-- email_sends are the emails someone else can make us send, kept a day
-- for their ceilings (internal/emailcap): per recipient for what an
-- anonymous caller triggers, per organization, address and inviting user
-- for invitations. A revoked share's invitations stay counted.
CREATE TABLE email_sends (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind            text NOT NULL CHECK (kind IN ('guest_code', 'share_invitation')),
    recipient       text NOT NULL CHECK (recipient <> ''),
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    sender_id       uuid REFERENCES users (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX email_sends_recipient_idx ON email_sends (recipient, created_at);
CREATE INDEX email_sends_organization_idx ON email_sends (organization_id, created_at) WHERE organization_id IS NOT NULL;
CREATE INDEX email_sends_sender_idx ON email_sends (sender_id, created_at) WHERE sender_id IS NOT NULL;
CREATE INDEX email_sends_created_at_idx ON email_sends (created_at);
