-- PostgreSQL notifies listeners of track index changes (its 0009); SQLite
-- has no notifications, so readers there keep polling. Nothing to change.
SELECT 1;
