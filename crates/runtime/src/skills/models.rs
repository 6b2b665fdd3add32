//! A skill's models (seed 002): named values of any type its handlers and behaviours share.

use std::any::Any;
use std::collections::BTreeMap;

/// Named models of one skill.
#[derive(Default)]
pub struct Models {
    entries: BTreeMap<String, Box<dyn Any + Send>>,
}

impl std::fmt::Debug for Models {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.entries.keys()).finish()
    }
}

impl Models {
    /// Adds `model` under `name`, replacing any model of that name.
    pub fn insert<T: Any + Send>(&mut self, name: &str, model: T) {
        self.entries.insert(name.to_string(), Box::new(model));
    }

    /// The model `name`, when it is a `T`.
    pub fn get<T: Any>(&self, name: &str) -> Option<&T> {
        self.entries.get(name)?.downcast_ref()
    }

    /// The model `name`, when it is a `T`, to change.
    pub fn get_mut<T: Any>(&mut self, name: &str) -> Option<&mut T> {
        self.entries.get_mut(name)?.downcast_mut()
    }

    /// True when there is a model named `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_found_by_name_and_type() {
        let mut models = Models::default();
        models.insert("count", 3u32);
        assert_eq!(models.get::<u32>("count"), Some(&3));
        assert_eq!(models.get::<u64>("count"), None, "another type");
        *models.get_mut::<u32>("count").unwrap() += 1;
        assert_eq!(models.get::<u32>("count"), Some(&4));
        assert!(models.contains("count") && !models.contains("other"));
        assert_eq!(format!("{models:?}"), "{\"count\"}");
    }
}
