use super::*;

#[test]
fn every_class_lists_its_answers_and_a_required_one_allows_only_what_it_expects() {
    let classes = space_classes();
    assert!(classes.len() >= 20, "{}", classes.len());
    for (_, input, class) in classes {
        let at = format!("{input} / {}", class.class);
        assert!(!class.allows.is_empty(), "{at}: no answers listed (allows)");
        for name in &class.allows {
            let answer = Answer::parse(name).unwrap_or_else(|| panic!("{at}: {name:?}"));
            if class.level == petstore_vocabulary::contract::Level::Required {
                assert!(
                    meets(answer, class.expect),
                    "{at}: required, expects {}, but allows {name}",
                    class.expect.as_str()
                );
            }
        }
        // The reference's own answer (the first) meets the class, recommended or not.
        let first = Answer::parse(&class.allows[0]).unwrap();
        assert!(
            meets(first, class.expect),
            "{at}: the reference's answer {first:?}"
        );
    }
}

#[test]
fn a_seed_draws_one_store_and_seeds_differ() {
    assert_eq!(Choices::draw(7), Choices::draw(7));
    let stores: std::collections::BTreeSet<String> =
        (0..32).map(|seed| Choices::draw(seed).describe()).collect();
    assert_eq!(stores.len(), 32);
    // Across seeds, every answer a class allows is drawn.
    for (_, input, class) in space_classes() {
        for name in &class.allows {
            let answer = Answer::parse(name).unwrap();
            assert!(
                (0..200).any(|seed| Choices::draw(seed).answer(&input, &class.class) == answer),
                "{input} / {}: {name} never drawn",
                class.class
            );
        }
    }
}
