//! Ids at the service boundary: a function that acts on an enrollment takes an
//! [`EnrollmentId`], not any `&str`, so a task id or a contact id cannot be passed in its
//! place. They are the stored text (`en_…`, `tk_…`, `dp_…`), unchanged on the wire.

macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(String);

        impl $name {
            /// The id as stored and sent.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id's text, owned.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                $name(id)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                $name(id.to_string())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}

id_type! {
    /// An enrollment's id (`en_…`).
    EnrollmentId
}

id_type! {
    /// A task's id (`tk_…`).
    TaskId
}

id_type! {
    /// A dispatch's id (`dp_…`).
    DispatchId
}
