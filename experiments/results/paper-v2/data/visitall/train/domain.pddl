; visitall, as listed in appendix J (Listing 4) of Nunez-Molina et al., IJCAI 2024.
(define (domain visit-all)
  (:requirements :typing)
  (:types place - object)
  (:predicates (connected ?x ?y - place)
               (at-robot ?x - place)
               (visited ?x - place))

  (:action move
    :parameters (?curpos ?nextpos - place)
    :precondition (and (at-robot ?curpos) (connected ?curpos ?nextpos))
    :effect (and (at-robot ?nextpos) (not (at-robot ?curpos)) (visited ?nextpos))))
