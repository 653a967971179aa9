//! The closed sets of values stored as TEXT that belong to the store's own tables: a
//! dispatch's and a task's status. One spelling each (`as_str`), read back with `parse`
//! (an unknown spelling is corrupt data, not a default).

/// Declares a closed set stored as TEXT: the enum, its spellings, `ALL`, `as_str`, `parse`.
macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The stored and wire spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The value spelled `text`, if it is one.
            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

text_enum! {
    /// Where a dispatch is in the outbox (docs/service.md, "Delivery").
    DispatchStatus {
        /// Waiting for a worker to claim and send it.
        Pending => "pending",
        /// Acknowledged sent, with the provider's message id.
        Sent => "sent",
        /// Acknowledged failed, with why.
        Failed => "failed",
        /// Nothing will be sent (the step is held); shown in the stream.
        Held => "held",
    }
}

text_enum! {
    /// Where a task is (docs/service.md, "Delivery").
    TaskStatus {
        /// Waiting for a person's outcome.
        Open => "open",
        /// An outcome took it.
        Completed => "completed",
        /// Its run ended otherwise (a timeout, an exit, a move).
        Closed => "closed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_read_back() {
        for s in DispatchStatus::ALL {
            assert_eq!(DispatchStatus::parse(s.as_str()), Some(*s));
        }
        for s in TaskStatus::ALL {
            assert_eq!(TaskStatus::parse(s.as_str()), Some(*s));
        }
        assert_eq!(TaskStatus::parse("Open"), None);
    }
}
