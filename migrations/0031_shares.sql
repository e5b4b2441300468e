-- Shares let people outside the organization review chosen creatives by
-- link (docs/shares.md). Only the SHA-256 of a share's token is kept:
-- the token itself is in the create answer alone. A share is never
-- widened: its permission and creatives are written once.
CREATE TABLE shares (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    token_hash      bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    permission      text NOT NULL CHECK (permission IN ('view', 'comment', 'decide')),
    expires_at      timestamptz NOT NULL,
    password_hash   text,
    created_by      uuid NOT NULL REFERENCES users (id),
    created_at      timestamptz NOT NULL DEFAULT now(),
    revoked_at      timestamptz
);

CREATE INDEX shares_organization_idx ON shares (organization_id, created_at DESC, id DESC);

CREATE TABLE share_creatives (
    share_id    uuid NOT NULL REFERENCES shares (id) ON DELETE CASCADE,
    creative_id uuid NOT NULL REFERENCES creatives (id) ON DELETE CASCADE,
    position    integer NOT NULL,
    PRIMARY KEY (share_id, creative_id)
);

-- sent_at is set when the share_invitation email went out; last_seen_at
-- when the invited guest last opened the share.
CREATE TABLE share_invitations (
    share_id     uuid NOT NULL REFERENCES shares (id) ON DELETE CASCADE,
    email        text NOT NULL CHECK (email <> ''),
    name         text,
    position     integer NOT NULL,
    sent_at      timestamptz,
    last_seen_at timestamptz,
    PRIMARY KEY (share_id, email)
);

-- A guest is a person who opened a share: one per email and share, so
-- the same email on the same share is the same guest again.
CREATE TABLE guests (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    share_id   uuid NOT NULL REFERENCES shares (id) ON DELETE CASCADE,
    email      text NOT NULL CHECK (email <> ''),
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (share_id, email)
);

-- A guest session belongs to one guest of one share. It is live while
-- its share is (the lookup reads the share's revoked_at and expires_at),
-- so revoking or expiring a share ends all its sessions at once; only a
-- hash of its token is stored, as for users' sessions.
CREATE TABLE guest_sessions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    guest_id    uuid NOT NULL REFERENCES guests (id) ON DELETE CASCADE,
    token_hash  bytea NOT NULL UNIQUE,
    csrf_token  text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
