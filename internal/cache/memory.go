package cache

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// MemoryConfig bounds a [Memory] cache. Zero fields take the defaults.
type MemoryConfig struct {
	MaxEntries    int   // DefaultMaxEntries when 0
	MaxBytes      int64 // keys and values in all; DefaultMaxBytes when 0
	MaxValueBytes int   // DefaultMaxValueBytes when 0
	// Now is the clock; time.Now when nil. Tests move it.
	Now func() time.Time
}

// Memory is an in-process LRU cache with per-entry TTLs, bounded in entries and
// bytes. When an entry would cross a bound, expired entries go first, then the
// least recently used.
type Memory struct {
	cfg MemoryConfig

	mu    sync.Mutex
	ll    *list.List // front: most recently used; values are *memEntry
	items map[string]*list.Element
	bytes int64
	locks map[string]memLock
	seq   uint64
}

type memEntry struct {
	key     string
	value   []byte
	expires time.Time
}

type memLock struct {
	token   uint64
	expires time.Time
}

// NewMemory returns an empty in-process cache.
func NewMemory(cfg MemoryConfig) *Memory {
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = DefaultMaxEntries
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxValueBytes <= 0 {
		cfg.MaxValueBytes = DefaultMaxValueBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Memory{cfg: cfg, ll: list.New(), items: map[string]*list.Element{}, locks: map[string]memLock{}}
}

func entrySize(key string, value []byte) int64 { return int64(len(key) + len(value)) }

// Get returns a copy of the value under key, if it has not expired.
func (m *Memory) Get(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[key]
	if !ok {
		return nil, false, nil
	}
	e := el.Value.(*memEntry)
	if !m.cfg.Now().Before(e.expires) {
		m.remove(el)
		return nil, false, nil
	}
	m.ll.MoveToFront(el)
	return append([]byte(nil), e.value...), true, nil
}

// Set stores a copy of value. A value over MaxValueBytes, or one that could not
// fit MaxBytes even alone, is refused with [ErrTooLarge].
func (m *Memory) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	size := entrySize(key, value)
	if len(value) > m.cfg.MaxValueBytes || size > m.cfg.MaxBytes {
		return ErrTooLarge
	}
	if ttl <= 0 {
		return nil // nothing to keep
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.Now()
	if el, ok := m.items[key]; ok {
		m.remove(el)
	}
	e := &memEntry{key: key, value: append([]byte(nil), value...), expires: now.Add(ttl)}
	m.items[key] = m.ll.PushFront(e)
	m.bytes += size
	if m.ll.Len() > m.cfg.MaxEntries || m.bytes > m.cfg.MaxBytes {
		m.evict(now)
	}
	return nil
}

// evict drops expired entries, then least recently used ones, until the
// bounds hold. Callers hold mu.
func (m *Memory) evict(now time.Time) {
	for el := m.ll.Back(); el != nil; {
		prev := el.Prev()
		if !now.Before(el.Value.(*memEntry).expires) {
			m.remove(el)
		}
		el = prev
	}
	for m.ll.Len() > m.cfg.MaxEntries || m.bytes > m.cfg.MaxBytes {
		m.remove(m.ll.Back())
	}
}

// remove unlinks el. Callers hold mu.
func (m *Memory) remove(el *list.Element) {
	e := m.ll.Remove(el).(*memEntry)
	delete(m.items, e.key)
	m.bytes -= entrySize(e.key, e.value)
}

// Delete removes key.
func (m *Memory) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[key]; ok {
		m.remove(el)
	}
	return nil
}

// Len reports the number of entries held (expired ones not yet dropped
// included) and their size in bytes.
func (m *Memory) Len() (entries int, bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ll.Len(), m.bytes
}

// TryLock claims key for ttl within this process.
func (m *Memory) TryLock(_ context.Context, key string, ttl time.Duration) (func(), bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.Now()
	if l, held := m.locks[key]; held && now.Before(l.expires) {
		return nil, false, nil
	}
	if len(m.locks) >= m.cfg.MaxEntries { // bound the lock table too
		for k, l := range m.locks {
			if !now.Before(l.expires) {
				delete(m.locks, k)
			}
		}
		if len(m.locks) >= m.cfg.MaxEntries {
			return nil, false, nil
		}
	}
	m.seq++
	token := m.seq
	m.locks[key] = memLock{token: token, expires: now.Add(ttl)}
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if l, held := m.locks[key]; held && l.token == token {
			delete(m.locks, key)
		}
	}, true, nil
}
