//! The contract's schemas by name: below both the schema loader and the OpenAPI reader, which
//! each name schemas, so neither needs the other for it.

/// The schemas the harness validates against, by file stem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SchemaName {
    PetStatus,
    NewPet,
    Pet,
    Pets,
    Error,
}

impl SchemaName {
    pub const ALL: [SchemaName; 5] = [
        SchemaName::PetStatus,
        SchemaName::NewPet,
        SchemaName::Pet,
        SchemaName::Pets,
        SchemaName::Error,
    ];

    pub fn file_name(self) -> &'static str {
        match self {
            SchemaName::PetStatus => "PetStatus.json",
            SchemaName::NewPet => "NewPet.json",
            SchemaName::Pet => "Pet.json",
            SchemaName::Pets => "Pets.json",
            SchemaName::Error => "Error.json",
        }
    }

    pub(super) fn embedded(self) -> &'static str {
        match self {
            SchemaName::PetStatus => include_str!("../../../../schemas/PetStatus.json"),
            SchemaName::NewPet => include_str!("../../../../schemas/NewPet.json"),
            SchemaName::Pet => include_str!("../../../../schemas/Pet.json"),
            SchemaName::Pets => include_str!("../../../../schemas/Pets.json"),
            SchemaName::Error => include_str!("../../../../schemas/Error.json"),
        }
    }
}
