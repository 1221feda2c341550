; Two actions are named 'pickup'.
(define (domain bw)
  (:predicates (clear ?x) (holding ?x))
  (:action pickup
    :parameters (?x)
    :precondition (clear ?x)
    :effect (and (holding ?x) (not (clear ?x))))
  (:action pickup
    :parameters (?x)
    :precondition (holding ?x)
    :effect (and (clear ?x) (not (holding ?x)))))
