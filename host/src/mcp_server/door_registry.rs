//! The HTTP door's open connections, indexed by what each is doing, so that counting the waiting
//! ones and choosing which to close to make room take a few set operations, not a scan of every
//! open connection: under a flood the door admits thousands of reopened sockets a second, each
//! of which may close another.

use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::Arc;

use super::door_io::Activity;

/// What an open connection is doing, as far as making room goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// It has never sent a whole request head (it may be a flood's).
    Fresh,
    /// It is serving a request, and is never closed to make room.
    Busy,
    /// A keep-alive that served and waits for its next request.
    Idle,
}

struct Entry {
    client: IpAddr,
    standing: Standing,
    activity: Arc<Activity>,
}

/// One client address's open connections.
#[derive(Default)]
struct Client {
    open: usize,
    /// Those that have served a request.
    served: usize,
    fresh: BTreeSet<u64>,
    idle: BTreeSet<u64>,
}

/// The open connections; ids grow, so each set's first id is its oldest connection.
#[derive(Default)]
pub(super) struct Registry {
    next: u64,
    open: HashMap<u64, Entry>,
    clients: HashMap<IpAddr, Client>,
    /// Fresh, from addresses none of whose open connections has served: a flood's, likely.
    strangers: BTreeSet<u64>,
    /// Fresh, from addresses one of whose open connections has served: a client's new
    /// connection, whose request may not have been read yet.
    newcomers: BTreeSet<u64>,
    idle: BTreeSet<u64>,
}

impl Registry {
    /// The id the next [`Registry::insert`] gives, for a hook the connection is made with.
    pub(super) fn next_id(&self) -> u64 {
        self.next
    }

    /// Registers a connection just accepted from `client`.
    pub(super) fn insert(&mut self, client: IpAddr, activity: Arc<Activity>) -> u64 {
        let id = self.next;
        self.next += 1;
        let known = {
            let tally = self.clients.entry(client).or_default();
            tally.open += 1;
            tally.fresh.insert(id);
            tally.served > 0
        };
        if known {
            self.newcomers.insert(id);
        } else {
            self.strangers.insert(id);
        }
        let standing = Standing::Fresh;
        self.open.insert(
            id,
            Entry {
                client,
                standing,
                activity,
            },
        );
        id
    }

    /// Connections open in all.
    pub(super) fn len(&self) -> usize {
        self.open.len()
    }

    /// Connections open from `client`.
    pub(super) fn open_from(&self, client: IpAddr) -> usize {
        self.clients.get(&client).map_or(0, |tally| tally.open)
    }

    /// Connections serving no request.
    pub(super) fn waiting(&self) -> usize {
        self.strangers.len() + self.newcomers.len() + self.idle.len()
    }

    /// Hears that connection `id` began serving a request (`busy`) or has no request left.
    pub(super) fn set_busy(&mut self, id: u64, busy: bool) {
        let Some(entry) = self.open.get_mut(&id) else {
            return;
        };
        let (was, client) = (entry.standing, entry.client);
        let now = match (was, busy) {
            (_, true) => Standing::Busy,
            (Standing::Busy, false) => Standing::Idle,
            (standing, false) => standing,
        };
        if now == was {
            return;
        }
        entry.standing = now;
        self.leave(id, client, was);
        if now == Standing::Idle {
            self.idle.insert(id);
            if let Some(tally) = self.clients.get_mut(&client) {
                tally.idle.insert(id);
            }
        }
        if was == Standing::Fresh {
            let first = self.clients.get_mut(&client).is_some_and(|tally| {
                tally.served += 1;
                tally.served == 1
            });
            if first {
                self.reclassify(client, true);
            }
        }
    }

    /// Forgets connection `id` (closed, or closed to make room).
    pub(super) fn remove(&mut self, id: u64) {
        let Some(entry) = self.open.remove(&id) else {
            return;
        };
        self.leave(id, entry.client, entry.standing);
        let Some(tally) = self.clients.get_mut(&entry.client) else {
            return;
        };
        tally.open -= 1;
        let mut last_served = false;
        if entry.standing != Standing::Fresh {
            tally.served -= 1;
            last_served = tally.served == 0;
        }
        if tally.open == 0 {
            self.clients.remove(&entry.client);
        } else if last_served {
            self.reclassify(entry.client, false);
        }
    }

    /// Closes a connection serving no request (of `client` only, if given), the oldest of the
    /// first kind there is: a stranger, a newcomer, an idle keep-alive. Whether one was closed.
    pub(super) fn evict_oldest_waiting(&mut self, client: Option<IpAddr>) -> bool {
        let oldest = match client {
            Some(client) => self
                .clients
                .get(&client)
                .and_then(|tally| tally.fresh.first().or(tally.idle.first()))
                .copied(),
            None => self
                .strangers
                .first()
                .or(self.newcomers.first())
                .or(self.idle.first())
                .copied(),
        };
        let Some(id) = oldest else { return false };
        if let Some(entry) = self.open.get(&id) {
            entry.activity.evict();
        }
        self.remove(id);
        true
    }

    /// Takes `id` out of the sets of its `standing`.
    fn leave(&mut self, id: u64, client: IpAddr, standing: Standing) {
        let tally = self.clients.get_mut(&client);
        match standing {
            Standing::Fresh => {
                if !self.strangers.remove(&id) {
                    self.newcomers.remove(&id);
                }
                if let Some(tally) = tally {
                    tally.fresh.remove(&id);
                }
            }
            Standing::Idle => {
                self.idle.remove(&id);
                if let Some(tally) = tally {
                    tally.idle.remove(&id);
                }
            }
            Standing::Busy => {}
        }
    }

    /// Moves `client`'s fresh connections between strangers and newcomers, when the first of
    /// its connections serves (`known`) or its last that served closes.
    fn reclassify(&mut self, client: IpAddr, known: bool) {
        let Some(tally) = self.clients.get(&client) else {
            return;
        };
        let (from, to) = if known {
            (&mut self.strangers, &mut self.newcomers)
        } else {
            (&mut self.newcomers, &mut self.strangers)
        };
        for id in &tally.fresh {
            from.remove(id);
            to.insert(*id);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn activity() -> Arc<Activity> {
        Activity::new(Duration::from_secs(10), Duration::from_secs(60), |_| {})
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    #[test]
    fn strangers_go_before_newcomers_and_newcomers_before_idle_keep_alives() {
        let mut registry = Registry::default();
        let keep_alive = registry.insert(ip(1), activity());
        registry.set_busy(keep_alive, true);
        registry.set_busy(keep_alive, false);
        let newcomer = registry.insert(ip(1), activity());
        let stranger = registry.insert(ip(2), activity());
        assert_eq!(registry.waiting(), 3);
        for expected in [stranger, newcomer, keep_alive] {
            let activity = registry.open[&expected].activity.clone();
            assert!(registry.evict_oldest_waiting(None));
            assert!(activity.is_evicted());
        }
        assert!(!registry.evict_oldest_waiting(None));
        assert_eq!((registry.len(), registry.waiting()), (0, 0));
        assert!(registry.clients.is_empty());
    }

    #[test]
    fn an_address_is_known_while_one_of_its_connections_that_served_is_open() {
        let mut registry = Registry::default();
        let socket = registry.insert(ip(1), activity());
        let client = registry.insert(ip(1), activity());
        assert!(registry.strangers.contains(&socket));
        registry.set_busy(client, true);
        assert!(registry.newcomers.contains(&socket));
        assert_eq!(registry.waiting(), 1);
        registry.remove(client);
        assert!(registry.strangers.contains(&socket));
        assert!(registry.newcomers.is_empty());
        assert_eq!(registry.open_from(ip(1)), 1);
    }

    #[test]
    fn a_busy_connection_is_never_chosen_and_a_client_is_chosen_among_its_own() {
        let mut registry = Registry::default();
        let busy = registry.insert(ip(1), activity());
        registry.set_busy(busy, true);
        assert!(!registry.evict_oldest_waiting(None));
        let other = registry.insert(ip(2), activity());
        assert!(!registry.evict_oldest_waiting(Some(ip(1))));
        assert!(registry.evict_oldest_waiting(Some(ip(2))));
        assert!(!registry.open.contains_key(&other));
        // A stale word about a closed connection changes nothing.
        registry.set_busy(other, false);
        assert_eq!((registry.len(), registry.waiting()), (1, 0));
    }
}
