//! What a generated options struct (src/options.rs) needs to become its C struct: the strings,
//! string lists and extension structs its pointers reach, owned until the call returns.

use std::any::Any;
use std::ffi::CString;
use std::os::raw::c_char;
use std::path::Path;

use crate::transfer::StringList;
use crate::{optional_c_string, optional_path, Error};

#[derive(Default)]
pub(crate) struct Keep {
    strings: Vec<CString>,
    lists: Vec<StringList>,
    structs: Vec<Box<dyn Any>>,
}

impl Keep {
    /// A string option; NULL for None.
    pub(crate) fn text(&mut self, what: &str, value: Option<&str>) -> Result<*const c_char, Error> {
        Ok(self.keep(optional_c_string(what, value)?))
    }

    /// A path option; NULL for None.
    pub(crate) fn path(
        &mut self,
        what: &str,
        value: Option<&Path>,
    ) -> Result<*const c_char, Error> {
        Ok(self.keep(optional_path(what, value)?))
    }

    /// A list of strings and its count.
    pub(crate) fn strings(
        &mut self,
        what: &str,
        items: &[String],
    ) -> Result<(*const *const c_char, usize), Error> {
        let list = StringList::patterns(what, items)?;
        let out = (list.ptr(), list.len());
        self.lists.push(list); // its buffers stay where they are
        Ok(out)
    }

    /// An extension struct, pointed to by the options that carry it.
    pub(crate) fn extension<T: 'static>(&mut self, raw: T) -> *const T {
        let boxed = Box::new(raw);
        let pointer: *const T = &*boxed;
        self.structs.push(boxed);
        pointer
    }

    fn keep(&mut self, value: Option<CString>) -> *const c_char {
        match value {
            Some(s) => {
                let pointer = s.as_ptr();
                self.strings.push(s); // the bytes stay where they are
                pointer
            }
            None => std::ptr::null(),
        }
    }
}
