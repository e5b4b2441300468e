-- Email notifications (docs/email.md).

-- name: NotificationsCreate :many
-- NotificationsCreate makes the notifications of published outbox events,
-- in the publishing transaction: mentions (each mentioned member once, not
-- the comment's author), decisions (the creative's author, with the
-- decider's comment), review requests (without a review plan the assigned
-- reviewer when a creative is submitted, or assigned while in review;
-- with one the reviewers, members and guest emails, of the stage a submit
-- or a stage's approval made active), due dates (the reviewers, members
-- and guest emails, of the announced stage who have not decided in its
-- round), deposits (credited, under review, refunded: the payer) and
-- share invitations (each invited address whose invitation holds the
-- share's token sealed; none when email was off at the share's
-- creation). Nobody is notified of their own action; inviting is the
-- creator's request to email those addresses, so their own is emailed
-- too. A notification goes to a user, or to an address (email: a guest,
-- in lower case as stages compare them). It returns the new notifications
-- for their jobs.
WITH ev AS (
    SELECT e.id, e.type, e.organization_id, e.user_id, e.payload::jsonb -> 'data' AS data
    FROM outbox_events e
    WHERE e.id = ANY(@event_ids::bigint[])
      AND e.type IN ('creative.comment_added', 'creative.approved', 'creative.changes_requested',
                     'creative.submitted', 'creative.updated', 'creative.stage_approved',
                     'creative.stage_due_soon', 'creative.stage_overdue',
                     'deposit.credited', 'deposit.under_review', 'deposit.refunded', 'share.created')
), stage AS (
    -- The stage an event names active (reviewPlan.activeStage), while it
    -- is still active in the creative's round: one a submit (stage 1) or
    -- the approval of the stage before made active asks its reviewers to
    -- review (by whoever acted, a member or a guest: the history event of
    -- the creative's version); one a due event announced reminds them. A
    -- stage decided since asks and reminds nobody.
    SELECT ev.id AS event_id, ev.organization_id, sr.creative_id, sr.round, sr.position, ps.reviewer_ids, ps.guest_emails,
           k.kind, ce.actor_id, lower(ga.email) AS actor_email, coalesce(u.name, ga.name) AS actor_name,
           CASE k.kind WHEN 'due' THEN jsonb_build_object(
                    'due', CASE ev.type WHEN 'creative.stage_due_soon' THEN 'soon' ELSE 'overdue' END,
                    'stage', ps.name, 'round', sr.round, 'position', sr.position, 'dueAt', sr.due_at)
                ELSE jsonb_build_object('stage', ps.name, 'round', sr.round, 'position', sr.position) END AS detail
    FROM ev
    CROSS JOIN LATERAL (SELECT CASE WHEN ev.type IN ('creative.stage_due_soon', 'creative.stage_overdue') THEN 'due'
                                    ELSE 'review_requested' END AS kind) k
    JOIN creatives c ON c.id = (ev.data ->> 'id')::uuid
    JOIN review_stage_rounds sr ON sr.creative_id = c.id AND sr.round = c.review_round
        AND sr.position = (ev.data -> 'reviewPlan' ->> 'activeStage')::smallint AND sr.status = 'active'
    JOIN review_plan_stages ps ON ps.creative_id = c.id AND ps.position = sr.position
    LEFT JOIN LATERAL (
        SELECT e.actor_id, e.actor_guest_id FROM creative_events e
        WHERE e.creative_id = c.id AND e.version = (ev.data ->> 'version')::integer
          AND e.type = CASE ev.type WHEN 'creative.submitted' THEN 'submit' ELSE 'stage_approved' END
        LIMIT 1
    ) ce ON k.kind = 'review_requested'
    LEFT JOIN users u ON u.id = ce.actor_id
    LEFT JOIN guests ga ON ga.id = ce.actor_guest_id
    WHERE ev.type IN ('creative.submitted', 'creative.stage_approved', 'creative.stage_due_soon', 'creative.stage_overdue')
), candidates AS (
    -- Mentions.
    SELECT DISTINCT ev.id AS event_id, (m ->> 'id')::uuid AS user_id, NULL::text AS email, 'mention' AS kind, ev.organization_id,
           (ev.data ->> 'creativeId')::uuid AS creative_id, (ev.data ->> 'id')::uuid AS comment_id, NULL::uuid AS deposit_id,
           NULL::uuid AS share_id, (ev.data -> 'author' ->> 'id')::uuid AS actor_id, ev.data -> 'author' ->> 'name' AS actor_name,
           jsonb_build_object('body', ev.data ->> 'body') AS detail
    FROM ev CROSS JOIN LATERAL jsonb_array_elements(ev.data -> 'mentions') m
    WHERE ev.type = 'creative.comment_added'
    UNION ALL
    -- Decisions and review requests: who acted is the creative's last event of that type.
    SELECT ev.id, CASE WHEN ev.type IN ('creative.approved', 'creative.changes_requested')
                       THEN (ev.data -> 'author' ->> 'id')::uuid ELSE (ev.data -> 'reviewer' ->> 'id')::uuid END,
           NULL::text,
           CASE WHEN ev.type IN ('creative.approved', 'creative.changes_requested') THEN 'decision' ELSE 'review_requested' END,
           ev.organization_id, (ev.data ->> 'id')::uuid, NULL::uuid, NULL::uuid, NULL::uuid,
           coalesce(ce.actor_id, ce.actor_guest_id), coalesce(u.name, g.name),
           jsonb_build_object('decision', ce.type, 'comment', ce.comment)
    FROM ev
    CROSS JOIN LATERAL (
        SELECT c.actor_id, c.actor_guest_id, c.type, c.comment, c.changes FROM creative_events c
        WHERE c.creative_id = (ev.data ->> 'id')::uuid
          AND c.type = CASE ev.type WHEN 'creative.approved' THEN 'approve' WHEN 'creative.changes_requested' THEN 'request_changes'
                                    WHEN 'creative.submitted' THEN 'submit' ELSE 'updated' END
        ORDER BY c.id DESC LIMIT 1
    ) ce
    -- Who acted: a member, or a guest of a share (docs/shares.md).
    LEFT JOIN users u ON u.id = ce.actor_id
    LEFT JOIN guests g ON g.id = ce.actor_guest_id
    WHERE ev.type IN ('creative.approved', 'creative.changes_requested')
       -- With a review plan, a submit asks the stage's reviewers (stage).
       OR (ev.type = 'creative.submitted' AND ev.data ->> 'reviewPlan' IS NULL)
       OR (ev.type = 'creative.updated' AND ev.data ->> 'reviewStatus' = 'in_review' AND ev.data -> 'reviewer' ->> 'id' IS NOT NULL
           AND EXISTS (SELECT 1 FROM jsonb_array_elements(ce.changes) ch WHERE ch ->> 'field' = 'reviewerId'))
    UNION ALL
    -- A stage's member reviewers without a decision in it: asked to
    -- review, or reminded of its due date.
    SELECT st.event_id, r.id, NULL::text, st.kind, st.organization_id, st.creative_id, NULL::uuid, NULL::uuid, NULL::uuid,
           st.actor_id, st.actor_name, st.detail
    FROM stage st
    CROSS JOIN LATERAL unnest(st.reviewer_ids) AS r(id)
    WHERE NOT EXISTS (SELECT 1 FROM review_decisions d
                      WHERE d.creative_id = st.creative_id AND d.round = st.round AND d.position = st.position AND d.reviewer_id = r.id)
    UNION ALL
    -- A stage's guest emails without a decision in it, but the guest who
    -- acted (the job sends only to an address a live decide share of the
    -- creative lets in).
    SELECT DISTINCT st.event_id, NULL::uuid, lower(g.email), st.kind, st.organization_id, st.creative_id, NULL::uuid, NULL::uuid,
           NULL::uuid, NULL::uuid, st.actor_name, st.detail
    FROM stage st
    CROSS JOIN LATERAL unnest(st.guest_emails) AS g(email)
    WHERE NOT EXISTS (SELECT 1 FROM review_decisions d
                      WHERE d.creative_id = st.creative_id AND d.round = st.round AND d.position = st.position
                        AND lower(d.guest_email) = lower(g.email))
      AND lower(g.email) IS DISTINCT FROM st.actor_email
    UNION ALL
    -- Deposits.
    SELECT ev.id, ev.user_id, NULL::text, 'deposit', NULL::uuid, NULL::uuid, NULL::uuid, (ev.data ->> 'id')::uuid, NULL::uuid,
           NULL::uuid, NULL::text,
           jsonb_build_object('status', ev.data ->> 'status')
    FROM ev
    WHERE ev.type LIKE 'deposit.%'
    UNION ALL
    -- Share invitations.
    SELECT ev.id, NULL::uuid, i.email, 'share_invitation', ev.organization_id, NULL::uuid, NULL::uuid, NULL::uuid, i.share_id,
           NULL::uuid, ev.data -> 'createdBy' ->> 'name', '{}'::jsonb
    FROM ev
    JOIN share_invitations i ON i.share_id = (ev.data ->> 'id')::uuid
    WHERE ev.type = 'share.created' AND i.token_sealed IS NOT NULL
)
INSERT INTO notifications (event_id, user_id, email, kind, organization_id, creative_id, comment_id, deposit_id, share_id, actor_name, detail)
SELECT c.event_id, c.user_id, c.email, c.kind, c.organization_id, c.creative_id, c.comment_id, c.deposit_id, c.share_id, c.actor_name, c.detail
FROM candidates c
WHERE (c.user_id IS NOT NULL AND c.user_id IS DISTINCT FROM c.actor_id) OR c.email IS NOT NULL
-- Either unique key: (event_id, user_id, kind), or (event_id, email, kind) for addresses.
ON CONFLICT DO NOTHING
RETURNING id, kind, (email IS NOT NULL)::boolean AS to_address;

-- name: NotificationGet :one
-- NotificationGet reads what sending a notification needs: its recipient,
-- their settings (the defaults when they saved none), and whether they
-- may still see what it is about (a member of its organization; a
-- deposit is its payer's) and, for a due date, whether it still waits
-- for them (the stage is active in that round and they have not decided).
SELECT n.id, n.kind, n.state, n.organization_id, n.creative_id, n.comment_id, n.deposit_id, n.actor_name, n.detail, n.created_at,
       u.id AS user_id, u.email, u.name,
       coalesce(s.email, 'instant')::text AS setting,
       coalesce(CASE n.kind WHEN 'mention' THEN s.mention WHEN 'review_requested' THEN s.review_requested
                            WHEN 'decision' THEN s.decision WHEN 'due' THEN s.due WHEN 'deposit' THEN s.deposit END, true)::boolean AS kind_on,
       ((n.organization_id IS NULL OR EXISTS (
            SELECT 1 FROM memberships m WHERE m.organization_id = n.organization_id AND m.user_id = n.user_id))
        AND (n.kind <> 'due' OR EXISTS (
            SELECT 1 FROM review_stage_rounds sr
            WHERE sr.creative_id = n.creative_id AND sr.round = (n.detail ->> 'round')::integer
              AND sr.position = (n.detail ->> 'position')::smallint AND sr.status = 'active'
              AND NOT EXISTS (SELECT 1 FROM review_decisions d WHERE d.creative_id = sr.creative_id AND d.round = sr.round
                                                                 AND d.position = sr.position AND d.reviewer_id = n.user_id))))::boolean AS has_access,
       coalesce(cr.number, 0)::integer AS creative_number, coalesce(cr.title, '')::text AS creative_title,
       coalesce(d.requested_amount_minor, 0)::bigint AS requested_amount_minor,
       coalesce(d.credited_amount_minor, 0)::bigint AS credited_amount_minor
FROM notifications n
JOIN users u ON u.id = n.user_id
LEFT JOIN notification_settings s ON s.user_id = n.user_id
LEFT JOIN creatives cr ON cr.id = n.creative_id
LEFT JOIN deposits d ON d.id = n.deposit_id
WHERE n.id = @id;

-- name: NotificationStateSet :exec
UPDATE notifications SET state = @state WHERE id = @id;

-- name: NotificationsDigestUsers :many
-- NotificationsDigestUsers lists who has notifications waiting for the digest.
SELECT DISTINCT user_id::uuid AS user_id FROM notifications WHERE state = 'digest' AND user_id IS NOT NULL;

-- name: NotificationsDigestList :many
-- NotificationsDigestList is a person's notifications waiting for the
-- digest, oldest first.
SELECT id FROM notifications WHERE user_id = @user_id::uuid AND state = 'digest' ORDER BY created_at, id;

-- name: NotificationsDigested :exec
-- NotificationsDigested marks notifications a digest listed.
UPDATE notifications SET state = 'digested' WHERE id = ANY(@ids::uuid[]) AND state = 'digest';

-- name: NotificationSettingsGet :one
SELECT coalesce(s.email, 'instant')::text AS email, coalesce(s.mention, true)::boolean AS mention,
       coalesce(s.review_requested, true)::boolean AS review_requested, coalesce(s.decision, true)::boolean AS decision,
       coalesce(s.due, true)::boolean AS due, coalesce(s.deposit, true)::boolean AS deposit
FROM (SELECT @user_id::uuid AS user_id) me
LEFT JOIN notification_settings s ON s.user_id = me.user_id;

-- name: NotificationSettingsPut :exec
INSERT INTO notification_settings (user_id, email, mention, review_requested, decision, due, deposit, updated_at)
VALUES (@user_id, @email, @mention, @review_requested, @decision, @due, @deposit, now())
ON CONFLICT (user_id) DO UPDATE SET email = excluded.email, mention = excluded.mention,
    review_requested = excluded.review_requested, decision = excluded.decision, due = excluded.due,
    deposit = excluded.deposit, updated_at = now();

-- name: NotificationKindOff :execrows
-- NotificationKindOff turns one kind off for a user (one-click unsubscribe).
INSERT INTO notification_settings (user_id, mention, review_requested, decision, due, deposit)
SELECT u.id, @kind::text <> 'mention', @kind::text <> 'review_requested', @kind::text <> 'decision',
       @kind::text <> 'due', @kind::text <> 'deposit'
FROM users u WHERE u.id = @user_id
ON CONFLICT (user_id) DO UPDATE SET
    mention = notification_settings.mention AND @kind::text <> 'mention',
    review_requested = notification_settings.review_requested AND @kind::text <> 'review_requested',
    decision = notification_settings.decision AND @kind::text <> 'decision',
    due = notification_settings.due AND @kind::text <> 'due',
    deposit = notification_settings.deposit AND @kind::text <> 'deposit',
    updated_at = now();

-- name: NotificationEmailOff :execrows
-- NotificationEmailOff turns all email off for a user (the digest's
-- one-click unsubscribe).
INSERT INTO notification_settings (user_id, email)
SELECT u.id, 'off' FROM users u WHERE u.id = @user_id
ON CONFLICT (user_id) DO UPDATE SET email = 'off', updated_at = now();

-- name: NotificationToAddressGet :one
-- NotificationToAddressGet reads what sending a notification to an
-- address (a guest, no user) needs: the organization, the share and the
-- invitation of a share_invitation (its sealed token), the creative of a
-- review_requested or due one, and whether the address may still act: a
-- share_invitation's share is live; a review_requested or due one's
-- address is invited to, or a guest of, a live decide share of the
-- creative, and for a due one the stage still waits for it (active in
-- that round, no decision of that address).
SELECT n.id, n.kind, n.state, n.email::text AS email, n.organization_id, n.creative_id, n.share_id, n.actor_name, n.detail,
       o.name AS organization_name,
       coalesce(cr.number, 0)::integer AS creative_number, coalesce(cr.title, '')::text AS creative_title,
       i.name AS invitee_name, i.token_sealed,
       coalesce(s.permission, '')::text AS permission, coalesce(s.expires_at, now())::timestamptz AS expires_at,
       (s.password_hash IS NOT NULL)::boolean AS has_password,
       coalesce((SELECT array_agg(c.number ORDER BY sc.position) FROM share_creatives sc JOIN creatives c ON c.id = sc.creative_id
                 WHERE sc.share_id = n.share_id), '{}')::integer[] AS share_creative_numbers,
       coalesce((SELECT array_agg(c.title ORDER BY sc.position) FROM share_creatives sc JOIN creatives c ON c.id = sc.creative_id
                 WHERE sc.share_id = n.share_id), '{}')::text[] AS share_creative_titles,
       (CASE WHEN n.kind = 'share_invitation' THEN s.revoked_at IS NULL AND s.expires_at > now()
             ELSE EXISTS (
                 SELECT 1 FROM share_creatives sc JOIN shares ds ON ds.id = sc.share_id
                 WHERE sc.creative_id = n.creative_id AND ds.permission = 'decide'
                   AND ds.revoked_at IS NULL AND ds.expires_at > now()
                   AND (EXISTS (SELECT 1 FROM guests g WHERE g.share_id = ds.id AND g.email = n.email)
                        OR EXISTS (SELECT 1 FROM share_invitations di WHERE di.share_id = ds.id AND di.email = n.email)))
             AND (n.kind <> 'due' OR EXISTS (
                 SELECT 1 FROM review_stage_rounds sr
                 WHERE sr.creative_id = n.creative_id AND sr.round = (n.detail ->> 'round')::integer
                   AND sr.position = (n.detail ->> 'position')::smallint AND sr.status = 'active'
                   AND NOT EXISTS (SELECT 1 FROM review_decisions d WHERE d.creative_id = sr.creative_id AND d.round = sr.round
                                                                      AND d.position = sr.position AND lower(d.guest_email) = n.email)))
        END)::boolean AS has_access
FROM notifications n
JOIN organizations o ON o.id = n.organization_id
LEFT JOIN creatives cr ON cr.id = n.creative_id
LEFT JOIN shares s ON s.id = n.share_id
LEFT JOIN share_invitations i ON i.share_id = n.share_id AND i.email = n.email
WHERE n.id = @id AND n.email IS NOT NULL;

-- name: NotificationToAddressStateSet :exec
-- NotificationToAddressStateSet records what became of a notification to
-- an address; for a share_invitation it also empties the invitation's
-- sealed token (sent, refused or dropped, it is not needed again) and
-- records sentAt when it was sent.
WITH n AS (
    UPDATE notifications SET state = @state WHERE id = @id RETURNING kind, share_id, email
)
UPDATE share_invitations i
SET token_sealed = NULL, sent_at = CASE WHEN @state::text = 'sent' THEN now() ELSE i.sent_at END
FROM n
WHERE n.kind = 'share_invitation' AND i.share_id = n.share_id AND i.email = n.email;
